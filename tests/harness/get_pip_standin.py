"""Stand-in for ansible-test's pip bootstrap script (get-pip-<version>.py).

ansible-test bootstraps pip into each sanity venv by downloading a get-pip script from
ci-files.testing.ansible.com, which this workplace cannot reach. This script does the same
job from what is reachable: the interpreter's bundled pip (ensurepip) installs the exact pip
version ansible-test asks for from the package index. sanity.sh copies it to the cache path
ansible-test looks in first (~/.ansible/test/cache/get_pip_<version>.py).
"""
import ensurepip
import os
import subprocess
import sys

# ansible-test passes pip's own options plus e.g. "pip==24.2"; --no-setuptools/--no-wheel are
# get-pip.py switches, not pip install options.
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
# ensurepip sets PIP_CONFIG_FILE=/dev/null in this process; the real install must see the
# host's pip configuration (index, certificates), as ansible-test's later installs do.
env = dict(os.environ)
ensurepip.bootstrap(upgrade=False, default_pip=True)
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + args, env=env))

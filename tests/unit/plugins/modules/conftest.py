"""Running a module's main() as Ansible would: arguments in, the JSON it prints out, with its exit code."""
import json

import pytest
from ansible.module_utils.testing import patch_module_args


@pytest.fixture
def run_main(capsys):
    def run(main, args):
        with patch_module_args(args):
            with pytest.raises(SystemExit) as exc:
                main()
        out = json.loads(capsys.readouterr().out)
        out["rc"] = exc.value.code
        return out
    return run

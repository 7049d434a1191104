"""The vllm@.service sandbox without systemd as PID 1, for the device proof (tests/device/sandbox_proof.sh).

The lent GPU machines have no systemd, so this applies what the unit's [Service] section asks for by hand:

  spec UNIT_FILE > spec.json       (here, where systemd is installed) expands the unit's SystemCallFilter=
                                   lines with `systemd-analyze syscall-filter` and systemd's own rules: the
                                   first line is an allow list, so @default is added; `~` lines remove; later
                                   lines give back. Also keeps the unit's SystemCallErrorNumber=,
                                   RestrictAddressFamilies=, DeviceAllow=, ReadWritePaths=, Environment= and User=.
  run SPEC -- CMD...               (on the GPU machine, as root) a new mount namespace with ProtectSystem=strict
                                   (every mount read-only but /dev, /proc, /sys; ReadWritePaths writable),
                                   ProtectHome, PrivateTmp, ProtectKernelTunables and ProtectControlGroups (read-only
                                   /proc/sys, /sys), a private /dev holding the pseudo devices DevicePolicy=closed
                                   allows plus the /dev/nvidia* nodes whose major a DeviceAllow=char-NAME resolves to
                                   through /proc/devices (as systemd resolves them); then an empty capability bounding
                                   set, the unit's user, no_new_privs, and the seccomp filter from the spec through
                                   libseccomp (pyseccomp): allowed calls pass, others fail with the unit's errno, other
                                   architectures are killed (SystemCallArchitectures=native); socket() only for the
                                   allowed address families; RestrictNamespaces: clone/unshare/setns with namespace
                                   flags fail, clone3 returns ENOSYS (systemd does the same, it cannot read clone3's
                                   flags). Then it execs CMD with the unit's Environment=.

Differences from systemd, said plainly: the device rule is a private /dev, not a cgroup device program
(the effect for a process is the same: other nodes do not exist); no cgroup of its own; ProtectProc,
ProtectHostname, ProtectClock and KeyringMode are not applied (the syscall groups they deny are
outside the allow list anyway, except clock_adjtime-style calls of @clock, which are not in it)."""
import ctypes
import json
import os
import re
import shlex
import subprocess
import sys

AF = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17}
CLONE_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
PSEUDO_DEVICES = ["null", "zero", "full", "random", "urandom", "tty"]


def service_lines(unit_text):
    """(key, value) of the [Service] section, in order."""
    section, out = None, []
    for raw in unit_text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]" and "=" in line:
            key, value = line.split("=", 1)
            out.append((key.strip(), value.strip()))
    return out


def effective_syscalls(filter_values, expand):
    """The set of allowed calls systemd compiles from SystemCallFilter= values (allow-list units only).
    expand(name) returns the calls of a group (@name) or [name] for a single call."""
    if not filter_values or filter_values[0].startswith("~"):
        raise ValueError("only an allow-list filter (first SystemCallFilter= without ~) is supported")
    allowed = set(expand("@default"))
    for value in filter_values:
        deny = value.startswith("~")
        names = set()
        for item in value.lstrip("~").split():
            names.update(expand(item))
        allowed = allowed - names if deny else allowed | names
    return allowed


_GROUPS = {}


def systemd_expand(name):
    """Calls of a group through systemd-analyze, nested groups expanded."""
    if not name.startswith("@"):
        return [name]
    if name not in _GROUPS:
        out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager", name],
                             capture_output=True, text=True, check=True).stdout
        calls = []
        for line in out.splitlines()[1:]:
            item = line.strip()
            if not item or item.startswith("#"):
                continue
            calls.extend(systemd_expand(item) if item.startswith("@") else [item])
        _GROUPS[name] = calls
    return _GROUPS[name]


def make_spec(unit_text):
    lines = service_lines(unit_text)

    def values(key):
        return [v for k, v in lines if k == key]
    version = subprocess.run(["systemctl", "--version"], capture_output=True, text=True,
                             check=False).stdout.split("\n")[0]
    env = {}
    for value in values("Environment"):
        for pair in shlex.split(value):
            k, v = pair.split("=", 1)
            env[k] = v
    return {
        "systemd": version,
        "allow": sorted(effective_syscalls(values("SystemCallFilter"), systemd_expand)),
        "errno": (values("SystemCallErrorNumber") or [None])[-1],  # none: a denied call kills the process
        "address_families": " ".join(values("RestrictAddressFamilies")).split(),
        "device_allow": [v.split()[0] for v in values("DeviceAllow")],
        "read_write_paths": " ".join(values("ReadWritePaths")).split(),
        "user": (values("User") or ["root"])[-1],
        "environment": env,
    }


def allowed_majors(device_allow, proc_devices_text):
    """Majors of the character devices that DeviceAllow=char-NAME entries name, resolved like systemd does:
    every major whose /proc/devices name matches NAME (a glob)."""
    import fnmatch
    majors, chars = set(), False
    for line in proc_devices_text.splitlines():
        line = line.strip()
        if line.startswith("Character devices"):
            chars = True
            continue
        if line.startswith("Block devices"):
            chars = False
            continue
        m = re.match(r"^(\d+)\s+(\S+)$", line)
        if chars and m:
            for entry in (value.split()[0] for value in device_allow):  # "char-NAME rw" or "char-NAME"
                if entry.startswith("char-") and fnmatch.fnmatchcase(m.group(2), entry[5:]):
                    majors.add(int(m.group(1)))
    return majors


def _mount(*args):
    subprocess.run(["mount", *args], check=True)


def _mountpoints():
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4].replace("\\040", " ") for line in f]


def sandbox_mounts(spec):
    if ctypes.CDLL(None, use_errno=True).unshare(0x00020000) != 0:  # CLONE_NEWNS (os.unshare is 3.12+)
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    _mount("--make-rprivate", "/")
    import pwd
    pw = pwd.getpwnam(spec["user"])
    for path in spec["read_write_paths"]:  # as vllm_service makes its cache folder: the user's, 0750
        os.makedirs(path, exist_ok=True)
        os.chown(path, pw.pw_uid, pw.pw_gid)
        os.chmod(path, 0o750)
    keep_rw = {os.path.realpath(p) for p in spec["read_write_paths"]}
    for path in sorted(keep_rw):
        _mount("--bind", path, path)
    # ProtectSystem=strict: everything read-only but the API file systems (and the paths kept writable)
    for mp in _mountpoints():
        if mp in keep_rw or mp.startswith(("/proc", "/dev", "/sys")):
            continue
        subprocess.run(["mount", "-o", "remount,bind,ro", mp], capture_output=True, check=False)  # some refuse: fine
    # ProtectKernelTunables / ProtectControlGroups
    _mount("--bind", "/proc/sys", "/proc/sys")
    _mount("-o", "remount,bind,ro", "/proc/sys")
    _mount("--rbind", "/sys", "/sys")
    _mount("-o", "remount,bind,ro", "/sys")
    # PrivateTmp, ProtectHome
    for path in ["/tmp", "/var/tmp"]:
        _mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs", path)
    for path in ["/home", "/root", "/run/user"]:
        if os.path.isdir(path):
            _mount("-t", "tmpfs", "-o", "ro,mode=0755", "tmpfs", path)


def private_dev(spec):
    """A /dev with the pseudo devices and the NVIDIA nodes DeviceAllow lets through; returns what it made."""
    majors = allowed_majors(spec["device_allow"], open("/proc/devices").read())
    nodes = [(n, os.stat("/dev/" + n)) for n in PSEUDO_DEVICES]
    nodes += [(n, os.stat("/dev/" + n)) for n in sorted(os.listdir("/dev")) if n.startswith("nvidia")
              and not os.path.isdir("/dev/" + n) and os.major(os.stat("/dev/" + n).st_rdev) in majors]
    caps = "/dev/nvidia-caps"
    if os.path.isdir(caps):
        nodes += [("nvidia-caps/" + n, os.stat(caps + "/" + n)) for n in sorted(os.listdir(caps))
                  if os.major(os.stat(caps + "/" + n).st_rdev) in majors]
    _mount("-t", "tmpfs", "-o", "mode=0755,nosuid", "tmpfs", "/dev")
    os.makedirs("/dev/shm"), os.makedirs("/dev/nvidia-caps")
    _mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs", "/dev/shm")
    for name, st in nodes:
        os.mknod("/dev/" + name, 0o666 | 0o020000, st.st_rdev)
        os.chmod("/dev/" + name, st.st_mode & 0o777)
    return sorted(name for name, _st in nodes), sorted(majors)


def drop_privileges(user):
    import pwd
    import resource
    pw = pwd.getpwnam(user)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (65536, 65536))  # LimitNOFILE=65536
    except ValueError:  # a machine whose own hard limit is lower (and root may not raise it there)
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):  # CapabilityBoundingSet= (empty)
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP; fails past the last cap, harmless
    os.setgroups([])
    os.setgid(pw.pw_gid)
    os.setuid(pw.pw_uid)  # from root to a user: permitted and effective capabilities are cleared
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS (NoNewPrivileges=yes)
        raise OSError(ctypes.get_errno(), "no_new_privs")
    return pw


def load_seccomp(spec, sc):
    import errno
    deny = sc.ERRNO(getattr(errno, spec["errno"])) if spec["errno"] else sc.KILL_PROCESS
    f = sc.SyscallFilter(defaction=deny)  # native architecture only; others: killed
    unknown = []
    conditional = {"socket", "clone", "clone3", "unshare", "setns", "sched_setscheduler"}
    for name in spec["allow"]:
        if name in conditional:
            continue
        try:
            f.add_rule(sc.ALLOW, name)
        except (RuntimeError, ValueError, OSError):
            unknown.append(name)  # not a call on this architecture or unknown to this libseccomp
    if "socket" in spec["allow"]:
        for family in spec["address_families"]:  # other families: the default errno (systemd: EAFNOSUPPORT)
            f.add_rule(sc.ALLOW, "socket", sc.Arg(0, sc.EQ, AF[family]))
    if "clone" in spec["allow"]:
        f.add_rule(sc.ALLOW, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_NS_FLAGS, 0))
    if "sched_setscheduler" in spec["allow"]:  # RestrictRealtime=yes: SCHED_OTHER, SCHED_BATCH, SCHED_IDLE only
        for policy in (0, 3, 5):
            f.add_rule(sc.ALLOW, "sched_setscheduler", sc.Arg(1, sc.EQ, policy))
    if "clone3" in spec["allow"]:
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for name in ("unshare", "setns"):
        if name in spec["allow"]:
            f.add_rule(sc.ALLOW, name, sc.Arg(0, sc.MASKED_EQ, CLONE_NS_FLAGS, 0))
    f.load()
    return unknown


def run(spec_path, cmd):
    spec = json.load(open(spec_path))
    import pyseccomp  # before the mounts hide where it lives
    sandbox_mounts(spec)
    nodes, majors = private_dev(spec)
    pw = drop_privileges(spec["user"])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "USER": pw.pw_name,
           "HOME": pw.pw_dir, "LOGNAME": pw.pw_name}
    env.update(spec["environment"])
    passed = ("SANDBOX_PASS_", "PYTHONPATH", "VLLM_API_KEY", "NCCL_", "TORCH_SYMM", "NVSHMEM_")
    env.update({k: v for k, v in os.environ.items() if k.startswith(passed)})
    unknown = load_seccomp(spec, pyseccomp)
    print(json.dumps({"sandbox": "applied", "uid": os.getuid(), "devices": nodes, "allowed_majors": majors,
                      "allowed_calls": len(spec["allow"]), "not_on_this_arch": unknown, "errno": spec["errno"],
                      "systemd_of_spec": spec["systemd"]}), flush=True)
    os.execvpe(cmd[0], cmd, env)


def main(argv):
    if argv[:1] == ["spec"] and len(argv) == 2:
        json.dump(make_spec(open(argv[1]).read()), sys.stdout, indent=1)
    elif argv[:1] == ["run"] and len(argv) > 3 and argv[2] == "--":
        run(argv[1], argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

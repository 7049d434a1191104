# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Paths the roles create, own, write or remove, checked for what they become.

A path lands in systemd units (``ReadWritePaths=``, ``EnvironmentFile=``), environment files, shell
scripts and ``chown``/``rm`` targets. So it must be plain: absolute, letters, digits and ``. _ - + @``
only, no ``.``/``..``/empty parts, and deep enough that it cannot be a system folder (``/``, ``/etc``,
``/var/cache``...). A file that is a drop-in must sit in its drop-in folder, never be the
distribution's own file (``/etc/sysctl.conf``, ``/etc/default/grub``)."""

from __future__ import annotations

import re

_PART_RE = re.compile(r"[A-Za-z0-9._@+-]+\Z")
# Folders a role must never take over, whatever their depth.
SYSTEM_DIRS = frozenset([
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt", "/proc",
    "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
    "/etc/apt", "/etc/default", "/etc/systemd", "/etc/systemd/system", "/usr/bin", "/usr/lib", "/usr/local",
    "/usr/local/bin", "/usr/local/lib", "/usr/share", "/var/cache", "/var/lib", "/var/log", "/var/tmp", "/run/user",
])


def path_problem(value, min_depth=2, read_only=False):
    """Why ``value`` is not a plain absolute path at least ``min_depth`` parts deep; None when it is.
    A ``read_only`` path (a toolkit or source the roles only read) may be a system folder such as ``/usr``."""
    if not isinstance(value, str) or not value.startswith("/"):
        return "is not an absolute path"
    parts = value.rstrip("/").split("/")[1:] if value != "/" else []
    if any(part in ("", ".", "..") for part in parts):
        return "has an empty, . or .. part"
    bad = [part for part in parts if not _PART_RE.match(part)]
    if bad:
        return "has characters other than letters, digits and . _ - + @ (in %r)" % bad[0]
    if read_only:
        return None if parts else "is / itself"
    if len(parts) < min_depth or "/" + "/".join(parts) in SYSTEM_DIRS:
        return "is a system folder or too close to one (at least %d levels below /, such as /var/cache/llmhost)" % min_depth
    return None


def errors(paths, optional=(), dropins=None, read_only=()):
    """Sentences naming each bad variable. ``paths`` maps variable names to values; names in ``optional``
    may be empty (the role then uses its default); ``dropins`` maps a name to the folders it must sit in;
    names in ``read_only`` are only read (a toolkit, a source archive) and may lie in system folders."""
    out = []
    for name, value in sorted((paths or {}).items()):
        if value in ("", None) and name in optional:
            continue
        problem = path_problem(value, read_only=name in read_only)
        folders = (dropins or {}).get(name)
        if problem is None and folders and value.rsplit("/", 1)[0] not in folders:
            problem = "must be a file directly in %s (a drop-in, never the distribution's own file)" % " or ".join(folders)
        if problem:
            out.append("%s=%r %s" % (name, value, problem))
    return out


def controller_dir(value, cwd, default="reports"):
    """The absolute folder on the controller that ``value`` names: ``~`` expanded, a relative path taken from
    ``cwd`` (where ansible-playbook runs), never from the collection's own folder; ``default`` when empty."""
    import os.path
    path = os.path.expanduser(str(value).strip()) if value not in (None, "") else default
    return os.path.normpath(os.path.join(cwd, path))

# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Paths the roles create, own, write or remove, checked for what they become.

A path lands in systemd units (``ReadWritePaths=``, ``EnvironmentFile=``), environment files, shell
scripts and ``chown``/``rm`` targets. So it must be plain: absolute, letters, digits and ``. _ - + @``
only, no ``.``/``..``/empty parts, and deep enough that it cannot be a system folder (``/``, ``/etc``,
``/var/cache``...). A file that is a drop-in must sit in its drop-in folder, never be the
distribution's own file (``/etc/sysctl.conf``, ``/etc/default/grub``)."""

from __future__ import annotations

import hashlib
import os
import re
import stat

# The longest name of one folder or file Linux file systems take (NAME_MAX).
NAME_MAX = 255
_PART_RE = re.compile(r"[A-Za-z0-9._@+-]+\Z")
# Folders a role must never take over, whatever their depth.
SYSTEM_DIRS = frozenset([
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt", "/opt", "/proc",
    "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
    "/etc/apt", "/etc/default", "/etc/systemd", "/etc/systemd/system", "/usr/bin", "/usr/lib", "/usr/local",
    "/usr/local/bin", "/usr/local/lib", "/usr/share", "/var/cache", "/var/lib", "/var/log", "/var/tmp", "/run/user",
    # shared memory, the programs' folders of PATH, key stores, systemd's and the schedulers' folders root reads
    "/dev/shm", "/run/shm", "/run/lock", "/var/lock", "/var/crash", "/var/mail", "/var/spool", "/var/spool/cron",
    "/usr/sbin", "/usr/local/sbin", "/usr/games", "/usr/local/games", "/snap", "/snap/bin", "/usr/libexec",
    "/etc/ssl", "/etc/ssl/private", "/etc/ssl/certs", "/etc/ssh", "/etc/pki", "/etc/sudoers.d", "/etc/cron.d",
    "/etc/cron.daily", "/etc/cron.hourly", "/etc/profile.d", "/etc/security", "/etc/pam.d", "/etc/ld.so.conf.d",
    "/etc/modprobe.d", "/etc/sysctl.d", "/etc/udev", "/etc/udev/rules.d", "/etc/systemd/user", "/etc/systemd/network",
    "/lib/systemd", "/lib/systemd/system", "/usr/lib/systemd", "/usr/lib/systemd/system", "/run/systemd",
    "/run/systemd/system", "/etc/nginx", "/etc/prometheus", "/etc/apt/sources.list.d", "/etc/apt/preferences.d",
    "/etc/apt/trusted.gpg.d", "/etc/apt/keyrings", "/usr/share/keyrings", "/var/lib/dpkg", "/var/lib/apt",
])


# Where systemd reads units and their drop-ins (systemd.unit(5)): a folder a role hands over or makes there, or in a
# drop-in folder (x.service.d) there, lets what writes it add a drop-in that runs as root at the next daemon-reload.
# The folder check of the first play (input_classes) applies it; the roles' own unit files live there.
UNIT_DIRS = ("/etc/systemd/system", "/etc/systemd/system.control", "/run/systemd/system", "/run/systemd/system.control",
             "/run/systemd/transient", "/run/systemd/generator", "/run/systemd/generator.early",
             "/run/systemd/generator.late", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
             "/lib/systemd/system", "/etc/systemd/user", "/usr/lib/systemd/user", "/usr/local/lib/systemd/user")


def unit_dir_problem(value):
    """Why a folder is inside one of systemd's unit folders (and so maybe a unit's drop-in folder); None when not."""
    found = [d for d in UNIT_DIRS if value.startswith(d + "/")]
    if found:
        return ("lies inside systemd's unit folder %s: what is written there (a drop-in in a unit's .d folder) runs as "
                "root at the next daemon-reload; choose a folder such as /var/lib/llmhost/..." % found[0])
    return None


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
    long_parts = [part for part in parts if len(part.encode("utf-8")) > NAME_MAX]
    if long_parts:
        return "has a name longer than %d bytes (%d), which Linux file systems refuse" % (NAME_MAX, len(long_parts[0]))
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
    path = os.path.expanduser(str(value).strip()) if value not in (None, "") else default
    return os.path.normpath(os.path.join(cwd, path))


_FILE_PART_RE = re.compile(r"[^A-Za-z0-9._-]")


def file_part(name):
    """``name`` (an inventory host name, say) as one file name on the controller: a name of letters, digits and
    ``. _ -`` that does not start with a dot stays as it is; any other is made so, with a short hash of the name so
    that two names never become one (``a/b`` and ``a_b``)."""
    text = str(name)
    safe = _FILE_PART_RE.sub("_", text).lstrip(".")[:100]
    if safe == text and safe:
        return text
    return "%s-%s" % (safe or "host", hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:8])


def real_folder_problem(path, holds=None):
    """Why ``path`` (on the machine this runs on) is not a real folder holding the regular file ``holds``; None when it
    is. Links are not followed, neither the folder nor the file: what is read back is what was named."""
    for target, kind, test in ((path, "folder", stat.S_ISDIR), (holds and os.path.join(path, holds), "file", stat.S_ISREG)):
        if not target:
            continue
        try:
            mode = os.lstat(target).st_mode
        except OSError:
            return "holds no %s" % holds if kind == "file" else "does not exist"
        if stat.S_ISLNK(mode):
            return "%s is a symbolic link, which is not followed; name the real %s" % (target, kind)
        if not test(mode):
            return "%s is not a %s" % (target, "regular file" if kind == "file" else kind)
    return None


def real_folder_errors(paths, holds=None):
    """One sentence per name of ``paths`` (name: path) that real_folder_problem refuses."""
    return ["%s=%s %s" % (name, value, problem) for name, value in sorted((paths or {}).items())
            for problem in [real_folder_problem(str(value), holds)] if problem]

# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is at a path, and the text of a small file, for the path_info module.

A role's reads of one host (is the folder there, what does the stamp say) go through here in one
module run instead of a stat or slurp each. Nothing here writes; a path that cannot be read is
described by its error, never raised."""

from __future__ import annotations

import grp
import os
import pwd
import stat

KINDS = ((stat.S_ISREG, "file"), (stat.S_ISDIR, "directory"), (stat.S_ISLNK, "link"))


def kind_of(mode):
    """'file', 'directory', 'link' or 'other' for an lstat mode."""
    for test, name in KINDS:
        if test(mode):
            return name
    return "other"


def describe(path):
    """exists, type (of the path itself: a link is a link), size, mode, owner and group, from lstat; a missing path
    is {'exists': False}, one that cannot be looked at also carries 'error'."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {"exists": False}
    except OSError as err:
        return {"exists": False, "error": err.strerror or str(err)}
    return {"exists": True, "type": kind_of(info.st_mode), "size": info.st_size, "mode": "%04o" % stat.S_IMODE(info.st_mode),
            "owner": _name(pwd.getpwuid, info.st_uid), "group": _name(grp.getgrgid, info.st_gid)}


def _name(lookup, number):
    """The user's or group's name, or its number as text when the host has no name for it."""
    try:
        return lookup(number)[0]
    except KeyError:
        return str(number)


def read_text(path, limit):
    """A regular file's text (UTF-8, bad bytes replaced), when it is at most ``limit`` bytes; else why not."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as err:
        return None, err.strerror or str(err)
    if len(data) > limit:
        return None, "larger than %d bytes" % limit
    return data.decode("utf-8", "replace"), None


def look(path, read=False, limit=1 << 20):
    """describe(path), plus its 'content' when ``read`` and it is a regular file (links followed)."""
    result = describe(path)
    if read and result["exists"] and os.path.isfile(path):
        content, error = read_text(path, limit)
        if error:
            result["error"] = error
        else:
            result["content"] = content
    return result


def look_all(look_at, read, limit):
    """Every path of ``look_at`` and ``read`` (read ones with their text), keyed by the path as given."""
    found = {path: look(path, False, limit) for path in look_at}
    found.update((path, look(path, True, limit)) for path in read)
    return found

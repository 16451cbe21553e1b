"""Finding a source's files within limits: a folder (every file inside, recursively) or a glob (``*``,
``?``, ``[...]`` in one name, ``**`` for any number of folders), walked one folder at a time so that the
walk stops as soon as it matches too many files, goes too deep or takes too long (``SourceLimits``).

As in ``pathlib``'s ``rglob``, a walk never enters a symbolic link to a folder (``/proc/self/root`` would
lead back to ``/`` for ever); a name given in full, or matched by a pattern within one folder, is followed.
As in ``glob``, a pattern does not match names starting with ``.`` unless it starts with one itself, and
folders that cannot be read are passed over.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from fnmatch import fnmatchcase

from dpdash.engines.limits import SourceLimits

__all__ = ["find_files"]

_MAGIC = re.compile(r"[*?[]")


def find_files(path: str, limits: SourceLimits, keep: Callable[[str], bool] = bool) -> list[str]:
    """The files of ``path`` (a folder: those whose name ``keep`` accepts; or a glob), sorted; raises
    ``ParameterError`` past a limit."""
    walk = _Walk(path, limits, keep)
    if os.path.isdir(path):
        walk.folder(path, 0)
    else:
        parts = path.split(os.sep)
        fixed = next(i for i, part in enumerate(parts) if _MAGIC.search(part) or i == len(parts) - 1)
        base = os.sep.join(parts[:fixed]) or (os.sep if path.startswith(os.sep) else os.curdir)
        walk.match(base, parts[fixed:], 0, relative=not path.startswith(os.sep) and not parts[:fixed])
    return sorted(walk.found)


class _Walk:
    def __init__(self, path: str, limits: SourceLimits, keep: Callable[[str], bool]) -> None:
        self.path = path
        self.keep = keep
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds
        self.found: list[str] = []

    def add(self, name: str) -> None:
        self.found.append(name)
        if len(self.found) > self.limits.files:
            self.limits.refuse_files(self.path)

    def entries(self, folder: str, depth: int) -> list[os.DirEntry[str]]:
        if time.monotonic() > self.deadline:
            self.limits.refuse_time(self.path, "finding the files of")
        if depth > self.limits.depth:
            self.limits.refuse_depth(self.path, folder)
        try:
            with os.scandir(folder) as listing:
                return list(listing)
        except OSError:  # unreadable, or gone: passed over, as glob does
            return []

    def folder(self, folder: str, depth: int) -> None:
        """Every file under ``folder``, hidden ones too (as ``rglob("*")``)."""
        for entry in self.entries(folder, depth):
            if _is_dir(entry):
                self.folder(entry.path, depth + 1)
            elif self.keep(entry.name) and _is_file(entry, follow=True):
                self.add(entry.path)

    def match(self, folder: str, parts: list[str], depth: int, relative: bool = False) -> None:
        """The files under ``folder`` that the pattern components ``parts`` match (``relative``: ``folder``
        is the current folder, left out of the names found)."""
        head, rest = parts[0], parts[1:]
        if head == "**":  # no folder, or any number of them
            if rest:
                self.match(folder, rest, depth, relative)
            for entry in self.entries(folder, depth):
                if entry.name.startswith("."):
                    continue
                child = entry.name if relative else entry.path
                if _is_dir(entry):
                    self.match(child, parts, depth + 1)
                elif not rest and _is_file(entry, follow=True):  # a trailing ** matches files too
                    self.add(child)
            return
        if not _MAGIC.search(head):
            child = head if relative else os.path.join(folder, head)
            if not rest:
                if os.path.isfile(child):
                    self.add(child)
            elif os.path.isdir(child):
                self.match(child, rest, depth + 1)
            return
        for entry in self.entries(folder, depth):
            if entry.name.startswith(".") and not head.startswith("."):
                continue
            if not fnmatchcase(entry.name, head):
                continue
            child = entry.name if relative else entry.path
            if not rest:
                if _is_file(entry, follow=True):
                    self.add(child)
            elif _is_dir(entry, follow=True):
                self.match(child, rest, depth + 1)


def _is_dir(entry: os.DirEntry[str], follow: bool = False) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str], follow: bool = False) -> bool:
    try:
        return entry.is_file(follow_symlinks=follow)
    except OSError:
        return False

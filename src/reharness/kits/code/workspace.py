"""The agent's working tree: a temporary directory and the file tools that act on it.

Paths are relative to the tree; absolute paths, ``..`` and anything that resolves outside the tree (a
symlink) are refused. Every tool returns the observation text; a tool that cannot do what was asked returns
a message starting with ``Error:`` (the failure detectors read that prefix) and changes nothing. Only text
files up to :data:`MAX_FILE_BYTES` are read or edited.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping

from reharness.kits.code.testrun import write_tree

MAX_FILE_BYTES = 512 * 1024
VIEW_LINES = 200
MAX_MATCHES = 50
SNIPPET_CONTEXT = 3
_SKIP_DIRS = frozenset({"__pycache__", ".git"})


class ToolError(Exception):
    """A tool could not act; the message is shown to the agent after ``Error:``."""


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{first + i:>4}| {line}" for i, line in enumerate(lines))


class Workspace:
    """A working tree in a temp dir (see module docstring)."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="reharness-code-"))
        # removed on close(), or when the workspace is garbage-collected or the process exits
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.root, True)
        write_tree(files, self.root)

    def close(self) -> None:
        self._cleanup()

    # ------------------------------------------------------------------ paths and files
    def resolve(self, path: str) -> str:
        """The absolute path of ``path`` inside the tree (``ToolError`` when it leaves the tree)."""
        clean = path.strip()
        if not clean or os.path.isabs(clean) or ".." in clean.replace("\\", "/").split("/"):
            raise ToolError(
                f"{path!r} is not a path inside the repository (use a relative path like pkg/mod.py)"
            )
        full = os.path.realpath(os.path.join(self.root, clean))
        if full != self.root and not full.startswith(self.root + os.sep):
            raise ToolError(f"{path!r} is outside the repository")
        return full

    def rel(self, full: str) -> str:
        return os.path.relpath(full, self.root).replace(os.sep, "/")

    def read(self, path: str) -> str:
        full = self.resolve(path)
        if os.path.isdir(full):
            raise ToolError(f"{path} is a directory, not a file")
        if not os.path.isfile(full):
            raise ToolError(f"{path} does not exist (view . lists the files)")
        if os.path.getsize(full) > MAX_FILE_BYTES:
            raise ToolError(f"{path} is larger than {MAX_FILE_BYTES} bytes")
        try:
            with open(full, encoding="utf-8") as fh:
                return fh.read()
        except UnicodeDecodeError:
            raise ToolError(f"{path} is not a UTF-8 text file") from None

    def _write(self, path: str, text: str) -> None:
        if len(text.encode("utf-8")) > MAX_FILE_BYTES:
            raise ToolError(f"the edit would make {path} larger than {MAX_FILE_BYTES} bytes")
        with open(self.resolve(path), "w", encoding="utf-8") as fh:
            fh.write(text)

    def files(self) -> dict[str, str]:
        """Every text file of the tree (``path → text``), e.g. to diff against the start."""
        out: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                if os.path.islink(full) or os.path.getsize(full) > MAX_FILE_BYTES:
                    continue
                try:
                    with open(full, encoding="utf-8") as fh:
                        out[self.rel(full)] = fh.read()
                except (UnicodeDecodeError, OSError):
                    continue
        return out

    # ------------------------------------------------------------------ tools
    def view(self, path: str = ".", start: int | None = None, end: int | None = None) -> str:
        full = self.resolve(path)
        if os.path.isdir(full):
            return self._listing(full)
        lines = self.read(path).splitlines()
        total = len(lines)
        if start is None:
            first, last = 1, min(total, VIEW_LINES)
        else:
            if start < 1 or (end is not None and end < start):
                raise ToolError(f"bad line range {start}-{end}: lines are numbered from 1")
            if start > max(total, 1):
                raise ToolError(f"{path} has only {total} lines")
            first, last = start, min(total, end if end is not None else start)
        header = f"[File: {self.rel(full)} ({total} lines), showing {first}-{last}]"
        more = (
            f"\n[{total - last} more lines: view {self.rel(full)} {last + 1}-{total}]" if last < total else ""
        )
        return header + "\n" + _numbered(lines[first - 1 : last], first) + more

    def _listing(self, full: str) -> str:
        entries: list[str] = []
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            depth = self.rel(dirpath).count("/") - (self.rel(full).count("/") if full != self.root else -1)
            if depth > 3:
                dirnames[:] = []
                continue
            base = self.rel(dirpath)
            for d in dirnames:
                entries.append(("" if base == "." else base + "/") + d + "/")
            for f in sorted(filenames):
                entries.append(("" if base == "." else base + "/") + f)
        return f"[Directory: {self.rel(full)}]\n" + "\n".join(sorted(entries))

    def search(self, pattern: str, path: str = ".") -> str:
        if not pattern:
            raise ToolError("the search pattern is empty")
        full = self.resolve(path)
        if not os.path.exists(full):
            raise ToolError(f"{path} does not exist")
        targets = (
            [self.rel(full)]
            if os.path.isfile(full)
            else [p for p in self.files() if full == self.root or p.startswith(self.rel(full) + "/")]
        )
        matches: list[str] = []
        for rel in sorted(targets):
            try:
                text = self.read(rel)
            except ToolError:
                continue
            matches += [
                f"{rel}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if pattern in line
            ]
        if not matches:
            return f"No matches for {pattern!r} in {self.rel(full)}"
        shown = matches[:MAX_MATCHES]
        more = (
            f"\n[{len(matches) - MAX_MATCHES} more matches not shown]" if len(matches) > MAX_MATCHES else ""
        )
        return f"[{len(matches)} matches for {pattern!r} in {self.rel(full)}]\n" + "\n".join(shown) + more

    def str_replace(self, path: str, old: str, new: str) -> str:
        if not old:
            raise ToolError("old text is empty: give the exact text to replace (use insert to add lines)")
        text = self.read(path)
        count = text.count(old)
        if count == 0:
            raise ToolError(
                f"old text not found in {path}; view the file and copy the exact text, indentation included"
            )
        if count > 1:
            lines, at = [], -1
            for _ in range(count):
                at = text.find(old, at + 1)
                lines.append(str(text.count("\n", 0, at) + 1))
            raise ToolError(
                f"old text occurs {count} times in {path} (lines {', '.join(lines)}); include more "
                "surrounding lines to make it unique"
            )
        if old == new:
            raise ToolError("old and new text are identical: nothing to change")
        at = text.find(old)
        updated = text[:at] + new + text[at + len(old) :]
        self._write(path, updated)
        first = text.count("\n", 0, at) + 1
        return f"[Edited {path}: replaced lines {first}-{first + old.count(chr(10))}]\n" + self._snippet(
            updated, first, first + new.count("\n")
        )

    def insert(self, path: str, line: int, text: str) -> str:
        current = self.read(path)
        lines = current.splitlines(keepends=True)
        if not 0 <= line <= len(lines):
            raise ToolError(
                f"line {line} is out of range: {path} has {len(lines)} lines (0 inserts at the top)"
            )
        if not text:
            raise ToolError("nothing to insert")
        block = text if text.endswith("\n") else text + "\n"
        if lines and not lines[-1].endswith("\n") and line == len(lines):
            lines[-1] += "\n"
        updated = "".join(lines[:line]) + block + "".join(lines[line:])
        self._write(path, updated)
        return (
            f"[Edited {path}: inserted {block.count(chr(10))} line(s) after line {line}]\n"
            + self._snippet(updated, line + 1, line + block.count("\n"))
        )

    @staticmethod
    def _snippet(text: str, first: int, last: int) -> str:
        lines = text.splitlines()
        lo = max(1, first - SNIPPET_CONTEXT)
        hi = min(len(lines), last + SNIPPET_CONTEXT)
        return _numbered(lines[lo - 1 : hi], lo)

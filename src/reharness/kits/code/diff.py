"""Unified diffs between file trees (``path → text``): make one, apply one strictly.

:func:`make_diff` writes git-style diffs (``diff --git``, ``--- a/…``, ``+++ b/…``, ``/dev/null`` for new and
deleted files, three lines of context). :func:`apply_diff` applies such a diff — ours or one written by git,
as in SWE-bench's ``patch`` / ``test_patch`` — with exact context matching and no fuzz, and raises
:class:`DiffError` naming the file and hunk that does not apply. Binary patches are refused.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class DiffError(ValueError):
    """A diff is malformed or does not apply to the tree."""


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def make_diff(old: dict[str, str], new: dict[str, str], context: int = 3) -> str:
    """The git-style unified diff that turns ``old`` into ``new`` (empty when they are equal)."""
    out: list[str] = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        before, after = _lines(a or ""), _lines(b or "")
        src = f"a/{path}" if a is not None else "/dev/null"
        dst = f"b/{path}" if b is not None else "/dev/null"
        body = list(difflib.unified_diff(before, after, src, dst, n=context))
        out.append(f"diff --git a/{path} b/{path}\n")
        if a is None:
            out.append("new file mode 100644\n")
        if b is None:
            out.append("deleted file mode 100644\n")
        for line in body:
            if line.startswith(("---", "+++")):
                out.append(line.rstrip() + "\n")
            elif line.endswith("\n"):
                out.append(line)
            else:
                out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass
class _FilePatch:
    old_path: str | None
    new_path: str | None
    hunks: list[tuple[int, list[str]]] = field(default_factory=list)


def _strip(path: str) -> str | None:
    path = path.split("\t")[0].strip()
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


def parse_diff(diff: str) -> list[_FilePatch]:
    """Split a unified diff into per-file hunks (``DiffError`` when it is malformed)."""
    patches: list[_FilePatch] = []
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("GIT binary patch") or line.startswith("Binary files"):
            raise DiffError("binary patches are not supported")
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            patches.append(_FilePatch(_strip(line[4:]), _strip(lines[i + 1][4:])))
            i += 2
            continue
        match = _HUNK.match(line)
        if match:
            if not patches:
                raise DiffError(f"hunk before any file header: {line.strip()!r}")
            old_len = int(match.group(2) if match.group(2) is not None else 1)
            new_len = int(match.group(4) if match.group(4) is not None else 1)
            body: list[str] = []
            i += 1
            seen_old = seen_new = 0
            while i < len(lines) and (seen_old < old_len or seen_new < new_len):
                text = lines[i]
                tag = text[:1]
                if tag == "\\":
                    if body:
                        body[-1] = body[-1].rstrip("\n")
                    i += 1
                    continue
                if tag not in (" ", "-", "+", "\n"):
                    raise DiffError(f"malformed hunk line {text.rstrip()!r}")
                text = " \n" if tag == "\n" else text
                seen_old += tag in (" ", "-", "\n")
                seen_new += tag in (" ", "+", "\n")
                body.append(text)
                i += 1
            if i < len(lines) and lines[i].startswith("\\"):
                body[-1] = body[-1].rstrip("\n")
                i += 1
            patches[-1].hunks.append((int(match.group(1)), body))
            continue
        i += 1
    return patches


def _apply_hunks(path: str, text: str, hunks: list[tuple[int, list[str]]]) -> str:
    lines = _lines(text)
    offset = 0
    for number, (start, body) in enumerate(hunks, 1):
        old = [t[1:] for t in body if t[:1] in (" ", "-")]
        new = [t[1:] for t in body if t[:1] in (" ", "+")]
        at = max(start - 1, 0) + offset if old else start + offset
        if lines[at : at + len(old)] != old:
            raise DiffError(f"hunk {number} of {path} does not apply (context at line {start} differs)")
        lines[at : at + len(old)] = new
        offset += len(new) - len(old)
    return "".join(lines)


def apply_diff(files: dict[str, str], diff: str) -> dict[str, str]:
    """A new tree: ``files`` with ``diff`` applied (``DiffError`` when any hunk does not apply)."""
    result = dict(files)
    for patch in parse_diff(diff):
        path = patch.new_path or patch.old_path
        if path is None:
            raise DiffError("a file patch with neither an old nor a new path")
        if patch.old_path is None:
            if path in result:
                raise DiffError(f"{path} already exists but the diff creates it")
            result[path] = _apply_hunks(path, "", patch.hunks)
            continue
        if patch.old_path not in result:
            raise DiffError(f"{patch.old_path} does not exist in the tree")
        text = _apply_hunks(path, result[patch.old_path], patch.hunks)
        if patch.new_path is None:
            del result[patch.old_path]
        else:
            if patch.new_path != patch.old_path:
                del result[patch.old_path]
            result[patch.new_path] = text
    return result


def touched_files(diff: str) -> list[str]:
    """The paths a diff changes, creates or deletes."""
    return sorted({p for fp in parse_diff(diff) for p in (fp.old_path, fp.new_path) if p is not None})

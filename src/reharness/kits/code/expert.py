"""Scripted ``code`` policies: the state-based solver and random actions.

The solver compares the working tree with the target (the start tree with the gold patch applied) and, for
the first file that differs, views it once, then issues one ``str_replace`` turning the first differing block
into the target's, widened with context lines until the old text is unique. It therefore applies the gold
patch through the tools and undoes any detour the tree took. With the tree on target it runs the tests once
(the ``FAIL_TO_PASS`` ones when they are visible, the whole suite otherwise), then submits.
"""

from __future__ import annotations

import difflib
import random

from reharness.kits.code.protocol import Command, render
from reharness.kits.code.tracker import EpisodeTracker


def next_edit(path: str, current: str, target: str) -> Command:
    """One ``str_replace`` that brings ``current`` closer to ``target`` (the first differing block)."""
    a, b = current.splitlines(keepends=True), target.splitlines(keepends=True)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    k = next(n for n, op in enumerate(ops) if op[0] != "equal")
    _, i1, i2, j1, j2 = ops[k]
    right = k + 1  # the next opcode to widen into
    while True:
        old = "".join(a[i1:i2])
        if (old and current.count(old) == 1) or (i1 == 0 and i2 == len(a)):
            break
        if i1 > 0:  # everything before the first change is equal: widen one line
            i1, j1 = i1 - 1, j1 - 1
            continue
        tag, _, e2, _, f2 = ops[right]
        if tag == "equal":  # widen one equal line to the right
            i2, j2 = i2 + 1, j2 + 1
            if i2 == e2:
                right += 1
        else:  # take in the whole next change
            i2, j2, right = e2, f2, right + 1
    return Command("str_replace", path=path, old="".join(a[i1:i2]), new="".join(b[j1:j2]))


def expert_action(
    current: dict[str, str], target: dict[str, str], tracker: EpisodeTracker, tests: list[str]
) -> str:
    """The solver's next command (see module docstring)."""
    for path in sorted(set(current) | set(target)):
        if path in target and current.get(path) != target[path]:
            if path not in tracker.files_viewed:
                return render(Command("view", path=path))
            if path not in current:  # a file the tools cannot create: nothing the solver can do
                continue
            return render(next_edit(path, current[path], target[path]))
    if not tracker.tests_run_since_edit:
        return render(Command("run_tests", tests=tuple(tests)))
    return "submit"


def random_action(files: dict[str, str], rng: random.Random) -> str:
    """A random well-formed command: views, searches, harmless edits, test runs and (rarely) submit."""
    paths = sorted(files)
    path = rng.choice(paths)
    lines = files[path].splitlines(keepends=True)
    roll = rng.random()
    if roll < 0.08:
        return "submit"
    if roll < 0.3:
        return render(Command("view", path=rng.choice([*paths, "."])))
    if roll < 0.45:
        words = files[path].split() or ["def"]
        return render(Command("search", pattern=rng.choice(words)[:20], path="."))
    if roll < 0.6:
        return render(Command("run_tests"))
    if roll < 0.8 and lines:
        line = rng.choice(lines)
        return render(Command("str_replace", path=path, old=line, new=line.rstrip("\n") + "  # checked\n"))
    return render(Command("insert", path=path, line=rng.randint(0, len(lines)), new="# note\n"))

"""Every repository path that README.md and docs/*.md mention exists in the repository.

A user reads the README from a clone: a path it names (in a link, inline code or a shell block) must be
there. A path counts when it starts with a top-level directory of the repository (``src/``, ``docs/`` …) or
is a relative markdown link; placeholders (``<RUN_ID>``, ``*``, ``{…}``) and web links are not paths.
The pages checked are README.md and ``docs/*.md``; ``docs/results/`` holds recorded experiment outputs and
``docs/reference/`` describes files of other repositories, so neither is read here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP_DIRS = ("src", "tests", "docs", "examples", "benchmarks", "data", ".ci")
# a token that starts with a top-level directory, not preceded by a path character
_TOPS = "|".join(re.escape(d) for d in TOP_DIRS)
REPO_PATH = re.compile(r"(?<![\w./~-])(?:\./)?((?:" + _TOPS + r")/[\w./-]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"[<>*{}$]")


def mentioned_paths(doc: Path) -> list[tuple[str, Path]]:
    """(as written, resolved path) for each repository path the document mentions."""
    text = doc.read_text(encoding="utf-8")
    found: list[tuple[str, Path]] = []
    for match in REPO_PATH.finditer(text):
        end = text[match.end() : match.end() + 1]
        token = match.group(1).rstrip(".,:;")
        if PLACEHOLDER.search(end) or PLACEHOLDER.search(token):
            continue
        found.append((token, ROOT / token))
    for match in LINK.finditer(text):
        target = match.group(1).split("#", 1)[0]
        if not target or re.match(r"^[a-z]+:", target) or PLACEHOLDER.search(target):
            continue
        found.append((target, (doc.parent / target).resolve()))
    return found


def test_the_docs_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in DOCS}
    assert "README.md" in names and "docs/design.md" in names and "docs/index.md" in names


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_mentioned_path_exists(doc: Path) -> None:
    missing = sorted({written for written, path in mentioned_paths(doc) if not path.exists()})
    assert not missing, f"{doc.relative_to(ROOT)} mentions paths that are not in the repository: {missing}"


def test_a_missing_path_is_caught(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    text = "see `src/reharness/nothing_here.py` and [a](gone.md); not `runs/<RUN_ID>`"
    doc.write_text(text, encoding="utf-8")
    written = [w for w, p in mentioned_paths(doc) if not p.exists()]
    assert written == ["src/reharness/nothing_here.py", "gone.md"]

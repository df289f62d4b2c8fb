"""Every package's ``__init__`` docstring is its table of contents: its job, then each module and subpackage.

A package's docstring names every module and subpackage it holds (``__main__`` aside), as a ``:mod:``
entry (``.name`` or the full dotted path) or as the name in double backquotes, so a reader finds any file
from the top down. A relative ``:mod:`` entry must name something the package holds, so no entry outlives
its module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import reharness

ROOT = Path(reharness.__file__).parent
IGNORED = {"__init__", "__main__"}
RELATIVE_MOD = re.compile(r":mod:`~?\.([A-Za-z_][A-Za-z0-9_]*)")


def packages() -> list[Path]:
    return sorted(init.parent for init in ROOT.rglob("__init__.py"))


def members(package: Path) -> set[str]:
    """The modules and subpackages a package holds, by name."""
    modules = {p.stem for p in package.glob("*.py") if p.stem not in IGNORED}
    subpackages = {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    return modules | subpackages


def docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""


def dotted(package: Path) -> str:
    return ".".join(package.relative_to(ROOT.parent).parts)


def is_listed(name: str, where: str, text: str) -> bool:
    forms = (rf":mod:`~?\.{name}`", rf":mod:`~?{re.escape(where)}\.{name}`", rf"``{name}(\.py)?``")
    return any(re.search(form, text) for form in forms)


def problems(package: Path, where: str, text: str) -> list[str]:
    """What is wrong with docstring ``text`` of ``package`` (dotted name ``where``); empty when complete."""
    if not text.strip():
        return [f"{where}: no docstring"]
    held = members(package)
    found = [f"{where}: {name} is not listed" for name in sorted(held) if not is_listed(name, where, text)]
    found += [
        f"{where}: :mod:`.{name}` names nothing the package holds"
        for name in sorted(set(RELATIVE_MOD.findall(text)) - held)
    ]
    return found


def test_every_package_docstring_lists_its_modules_and_subpackages() -> None:
    found = packages()
    assert len(found) > 20  # the walk found the nested packages too
    wrong = [
        problem for package in found for problem in problems(package, dotted(package), docstring(package))
    ]
    assert not wrong, "\n".join(wrong)


def test_a_missing_or_stale_entry_is_caught(tmp_path: Path) -> None:
    """Dropping any one entry from a complete docstring, or naming a module that is gone, is reported."""
    for name in ("__init__.py", "__main__.py", "records.py", "run_store.py", "sub/__init__.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "notes").mkdir()  # a folder without ``__init__.py`` is not a subpackage
    text = "Job.\n\n- :mod:`.records`: records;\n- ``run_store``: runs;\n- :mod:`pkg.sub`: a subpackage."
    assert members(tmp_path) == {"records", "run_store", "sub"}
    assert problems(tmp_path, "pkg", text) == []
    for entry, name in (
        (":mod:`.records`", "records"),
        ("``run_store``", "run_store"),
        (":mod:`pkg.sub`", "sub"),
    ):
        assert problems(tmp_path, "pkg", text.replace(entry, "")) == [f"pkg: {name} is not listed"]
    stale = problems(tmp_path, "pkg", text + "\n:mod:`.gone`")
    assert stale == ["pkg: :mod:`.gone` names nothing the package holds"]
    assert problems(tmp_path, "pkg", "") == ["pkg: no docstring"]

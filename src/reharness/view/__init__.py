"""``reharness view``: one self-contained HTML page of a run, an improve output, a pool or a training output.

:func:`build_page` finds what a path holds (:mod:`.runs` reads run directories, read-only) and builds the
page's data (:mod:`.model`); :func:`render_html` writes it as one HTML file with its styles and script
inline (:mod:`.html`, from ``assets/``; no network at view time). :mod:`.screenshot` saves a PNG of a page.
Kinds of page: ``run`` (one run directory, or a folder of runs), ``improve`` (the paired view,
:mod:`.paired`), ``pool`` and ``training`` (:mod:`.outputs`). :mod:`.browser` drives a headless Chromium
to check pages.
"""

from __future__ import annotations

from pathlib import Path

from reharness.core.errors import DataError
from reharness.view.html import render_html
from reharness.view.model import PageData
from reharness.view.outputs import is_pool_dir, is_training_dir, load_pool, load_training
from reharness.view.paired import is_improve_dir, load_improve
from reharness.view.runs import read_run, run_dirs_under

__all__ = ["PageData", "build_page", "page_kind", "render_html"]


def page_kind(path: Path) -> str:
    """``run``, ``improve``, ``pool`` or ``training``: what ``path`` holds (an error if nothing known)."""
    if not path.exists():
        raise DataError(f"{path} does not exist", hint="pass a run directory or a command's --out directory")
    if is_improve_dir(path):
        return "improve"
    if is_pool_dir(path):
        return "pool"
    if is_training_dir(path):
        return "training"
    if run_dirs_under(path):
        return "run"
    raise DataError(
        f"{path} holds nothing reharness view can show",
        hint="pass a run directory (with run.json), a folder of runs, or the --out directory of "
        "`reharness improve`, `pool evolve`, `train …` or `experiment …`",
    )


def build_page(path: str | Path) -> PageData:
    """The data of the page for ``path``."""
    where = Path(path)
    kind = page_kind(where)
    if kind == "improve":
        return load_improve(where)
    if kind == "pool":
        return load_pool(where)
    if kind == "training":
        return load_training(where)
    dirs = run_dirs_under(where)
    page = PageData(kind="run", title=f"run · {where.resolve().name}", source=str(where))
    for run_path in dirs:
        meta, episodes = read_run(run_path)
        page.add_run(meta, episodes)
    return page

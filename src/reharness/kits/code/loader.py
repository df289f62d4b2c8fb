"""Load real SWE-bench / SWE-Gym instance files, with the repositories the user supplies.

Instance files are what the SWE-bench and SWE-Gym datasets publish: JSON (a list of rows) or JSONL (a row a
line), each row with at least :data:`~reharness.kits.code.schema.REQUIRED_FIELDS` (``FAIL_TO_PASS`` and
``PASS_TO_PASS`` as a list or its JSON text). Nothing is fetched: ``repos_dir`` must hold one checkout per
repository at the instance's ``base_commit``, named like SWE-bench's ``owner__name`` (``django__django``) or
just ``name``; a checkout with a ``.git`` directory is checked against ``base_commit`` when ``git`` exists.

Tests run in the same confined runner as generated instances (``python -I -S -B``, standard library only):
``unittest`` test cases and plain ``test_*`` functions with ``assert`` work; repositories that need pytest
features (fixtures, parametrised ids such as ``test_x[1]``) or installed dependencies need their own
environment, which this offline runner does not provide.

Usage: ``reharness run --env code --data swe-gym.jsonl`` (the checkouts in ``repos/`` next to the file, or
the harness's ``env_options.repos_dir``), or from Python ``CodeEnv(instances_path="swe-gym.jsonl",
repos_dir="repos/")``, whose single split is ``"data"``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from pydantic import ValidationError

from reharness.core.errors import EnvError
from reharness.envs.base import Task
from reharness.kits.code.schema import REQUIRED_FIELDS, CodeInstance
from reharness.kits.code.workspace import MAX_FILE_BYTES

DATA_SPLIT = "data"
_SKIP_DIRS = frozenset({".git", "__pycache__", ".tox", ".venv", "node_modules"})


def load_instances(path: str | Path) -> list[CodeInstance]:
    """Read a SWE-bench / SWE-Gym instance file (JSON list or JSONL); clear errors for bad rows."""
    path = Path(path)
    if not path.is_file():
        raise EnvError(f"code: no instance file {path}", hint="pass a SWE-bench/SWE-Gym .json or .jsonl file")
    text = path.read_text(encoding="utf-8")
    try:
        if text.lstrip().startswith("["):
            rows = json.loads(text)
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise EnvError(f"code: {path} is not JSON or JSONL: {exc}") from exc
    instances: list[CodeInstance] = []
    for n, row in enumerate(rows, 1):
        missing = [f for f in REQUIRED_FIELDS if not isinstance(row, dict) or f not in row]
        if missing:
            raise EnvError(
                f"code: row {n} of {path} lacks {missing}", hint=f"each row needs {list(REQUIRED_FIELDS)}"
            )
        try:
            instances.append(CodeInstance.model_validate(row))
        except ValidationError as exc:
            raise EnvError(f"code: row {n} of {path} is not a valid instance: {exc}") from exc
    if not instances:
        raise EnvError(f"code: {path} holds no instances")
    return instances


def repo_dir(repos_dir: Path | None, instance: CodeInstance) -> Path:
    """The checkout of ``instance.repo`` under ``repos_dir`` (``owner__name`` or ``name``)."""
    if repos_dir is None:
        raise EnvError(f"code: instance {instance.instance_id} has no files and no repos_dir was given")
    owner_name = instance.repo.replace("/", "__")
    for candidate in (repos_dir / owner_name, repos_dir / instance.repo.split("/")[-1]):
        if candidate.is_dir():
            return candidate
    raise EnvError(
        f"code: no checkout of {instance.repo} in {repos_dir}",
        hint=f"clone it at {instance.base_commit[:12]} into {repos_dir / owner_name}",
    )


def _check_commit(root: Path, instance: CodeInstance) -> None:
    if not (root / ".git").exists() or shutil.which("git") is None:
        return
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=False
    )
    head = done.stdout.strip()
    if done.returncode == 0 and head and not head.startswith(instance.base_commit[:12]):
        raise EnvError(
            f"code: {root} is at {head[:12]}, but {instance.instance_id} needs {instance.base_commit[:12]}",
            hint=f"git -C {root} checkout {instance.base_commit}",
        )


def repo_files(repos_dir: Path | None, instance: CodeInstance) -> dict[str, str]:
    """The text files of the instance's checkout (``path → text``), ``.git`` and caches left out."""
    root = repo_dir(repos_dir, instance)
    _check_commit(root, instance)
    files: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or os.path.getsize(full) > MAX_FILE_BYTES:
                continue
            try:
                with open(full, encoding="utf-8") as fh:
                    files[os.path.relpath(full, root).replace(os.sep, "/")] = fh.read()
            except (UnicodeDecodeError, OSError):
                continue
    return files


def task_from_instance(instance: CodeInstance, task_id: str, split: str) -> Task:
    """A reharness :class:`Task` holding an instance (the gold ``patch`` only in ``gold``)."""
    state = instance.model_dump(exclude={"patch"})
    return Task(
        task_id=task_id,
        split=split,
        instruction=instance.problem_statement,
        task_type=instance.bug_kind or "swe",
        state=state,
        gold={"patch": instance.patch},
    )


def instance_task(instance: CodeInstance, index: int, repos_dir: Path) -> Task:
    """The task of a loaded instance (its checkout is read when an episode starts)."""
    repo_dir(repos_dir, instance)  # fail early when the checkout is missing
    return task_from_instance(instance, f"code/{DATA_SPLIT}/{index:06d}", DATA_SPLIT)

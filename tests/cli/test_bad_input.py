"""Bad command-line input, command by command and option kind by option kind, through the real CLI.

Every case must exit non-zero without a Python exception escaping (no traceback), and the message must name
the option or file that was wrong and say how to fix it. Cases that fail validation must also leave nothing
behind: no run directory, no ``index.sqlite`` row, no improve output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.rich_utils
from typer.testing import CliRunner

from reharness.cli.main import app

SHOP_PATCH = {
    "schema_version": "reharness-patch-v1",
    "description": "a shop-only hint",
    "env": "shop",
    "hooks": {"after_feedback": "def after_feedback(ctx, nb):\n    return None\n"},
}
GE1 = "greater than or equal to 1"
EV = ("pool", "evolve", "--env", "household", "--agent", "solver")  # pool evolve, up to its options
ES = ("experiment", "s", "--env", "shop")  # experiment s, up to its options
TRY = ("patch", "try", "{shop}", "--hook", "after_feedback", "--ctx")  # patch try, up to its --ctx value
_BOX = re.compile(r"[│╭╮╰╯─]+")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Placeholders of the cases: bad files of every kind and one real, finished run directory."""
    root = tmp_path_factory.mktemp("bad")
    (root / "afile").write_text("hello\n")
    (root / "adir").mkdir()
    (root / "binary.yaml").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(128, 256)))
    (root / "text.json").write_text("hello world\n")  # a .json file that is not JSON
    (root / "empty.json").write_text("")
    (root / "shop.json").write_text(json.dumps(SHOP_PATCH))
    (root / "ctx.json").write_text("{}")
    (root / "list.json").write_text("[1, 2]")
    (root / "syntax.yaml").write_text("step_limit: [\n")
    (root / "field.yaml").write_text("step_limt: 3\n")
    result = CliRunner().invoke(
        app, ["run", "--env", "db", "--n", "2", "--out", str(root / "runs"), "--json"]
    )
    assert result.exit_code == 0, result.output
    names = {p.name.split(".")[0]: str(p) for p in root.iterdir()}
    pools = Path(__file__).resolve().parents[2] / "docs" / "results"  # shipped pools
    return names | {
        "missing": str(root / "missing.json"),
        "run": json.loads(result.stdout)["out"],
        "shoppool": str(pools / "pool-shop"),
        "hpool": str(pools / "pool-household"),
    }


def invoke(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, BaseException | None]:
    """Run the CLI in-process; return the exit code, the output as one line (rich's error box and its
    line wrapping removed) and the exception that escaped, if any (``SystemExit`` is the normal exit)."""
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 400)  # one line per message: easier to match
    result = CliRunner().invoke(app, args)
    text = " ".join(_BOX.sub(" ", result.output).split())
    escaped = None if isinstance(result.exception, SystemExit | None) else result.exception
    return result.exit_code, text, escaped


WRITERS = (  # commands that take --out
    "run",
    "improve",
    "demo",
    "agent train",
    "train engineer",
    "train policy",
    "experiment r1",
    "experiment s",
    "pool evolve",
)


def fill(args: tuple[str, ...], files: dict[str, str], out: Path) -> list[str]:
    """The command line with placeholders filled; commands that write get ``--out OUT`` unless they name
    one, so that "nothing written" is checked in OUT (and nothing lands in the working directory)."""
    if "--out" not in args and (args[0] in WRITERS or " ".join(args[:2]) in WRITERS):
        args = (*args, "--out", "{out}")
    return [a.format(**files, out=out) for a in args]


# (command line, fragments the message must hold: the option or file, and the fix)
CASES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    # run: numbers
    (("run", "--env", "db", "--n", "0"), ("'--n'", GE1)),
    (("run", "--env", "db", "--n", "-1"), ("'--n'", GE1)),
    (("run", "--env", "db", "--n", "100000000"), ("--n 100000000 exceeds", "pass --n 100000 or fewer")),
    (("run", "--env", "db", "--concurrency", "0"), ("'--concurrency'", GE1)),
    (("run", "--env", "db", "--concurrency", "-5"), ("'--concurrency'", GE1)),
    (("run", "--env", "db", "--concurrency", "5000"), ("'--concurrency'", "less than or equal to 1024")),
    # run: the output directory
    (("run", "--env", "db", "--out", "{afile}"), ("'--out'", "is not a directory", "Pass a directory")),
    (("run", "--env", "db", "--out", "{afile}/sub"), ("'--out'", "afile is a file, so no directory")),
    (("run", "--env", "db", "--out", "/dev/null"), ("'--out'", "/dev/null exists and is not a directory")),
    (("run", "--env", "db", "--out", "/proc/reharness"), ("'--out'", "cannot create directories in /proc")),
    # run: input files
    (("run", "--env", "db", "--harness", "{binary}"), ("binary.yaml is not UTF-8", "saved as UTF-8")),
    (("run", "--env", "db", "--harness", "{adir}"), ("'--harness'", "is a directory, not a file")),
    (("run", "--env", "db", "--harness", "{missing}"), ("'--harness'", "does not exist", "Pass an existing")),
    (("run", "--env", "db", "--harness", "{text}"), ("text.json must hold a mapping", "how to fix")),
    (("run", "--env", "db", "--harness", "{syntax}"), ("syntax.yaml is not valid YAML", "fix the YAML")),
    (("run", "--env", "db", "--harness", "{field}"), ("step_limt: Extra inputs are not", "how to fix")),
    (("run", "--env", "db", "--data", "{list}"), ("list.json", "expected a JSON object", "DBBench entry")),
    (("run", "--env", "db", "--data", "{adir}"), ("'--data'", "is a directory, not a file")),
    (("run", "--env", "db", "--data", "{binary}"), ("binary.yaml", "must be UTF-8")),
    (("run", "--env", "db", "--patch", "{adir}"), ("'--patch'", "is a directory, not a file")),
    (("run", "--env", "db", "--patch", "{text}"), ("text.json: invalid JSON", "fix the JSON syntax")),
    (("run", "--env", "db", "--patch", "{empty}"), ("empty.json: the file is empty", "schema_version")),
    (("run", "--env", "db", "--patch", "{shop}"), ("shop.json is a patch for env 'shop'", "use --env shop")),
    # run: names and choices
    (("run", "--env", "db", "--isolation", "bogus"), ("'--isolation'", "'standard', 'strict'")),
    (("run", "--env", "shop", "--agent", "gold"), ("gold agent needs", "--agent solver", "(db, code)")),
    (("run", "--env", "db", "--agent", "openai:m@ftp://x"), ("'ftp://x'", "must start with http://")),
    (("run", "--env", "db", "--agent", "tiny:BAD"), ("'BAD' is malformed", "named ENV-SIZE")),
    (("run", "--env", "db", "--agent", "hf:{adir}/none"), ("does not exist", "hf:PATH")),
    # run: the executor (--executor ray without ray installed: tests/runtime/test_ray_executor.py)
    (("run", "--env", "db", "--executor", "bogus"), ("'--executor'", "'local', 'ray'")),
    (("run", "--env", "db", "--executor", "ray", "--ray-actors", "0"), ("'--ray-actors'", GE1)),
    (("run", "--env", "db", "--executor", "ray", "--ray-actors", "5000"),
     ("'--ray-actors'", "less than or equal")),
    (("run", "--env", "db", "--executor", "ray", "--ray-address", "head node"),
     ("'--ray-address'", "'head node' is not a Ray address", "ray://HOST:PORT")),
    (("run", "--env", "db", "--ray-address", "10.0.0.1:99999"), ("'--ray-address'", "is not a Ray address")),
    (("run", "--env", "db", "--ray-actors", "3"),
     ("--ray-actors only applies to --executor ray", "add --executor")),
    (("run", "--env", "db", "--ray-address", "auto", "--ray-actors", "3"),
     ("--ray-address and --ray-actors only",)),
    (("train", "policy", "--env", "household", "--rescue", "none", "--out", "{out}", "--ray-actors", "2"),
     ("--ray-actors only applies to --executor ray", "add --executor ray")),
    # train: dry run and launch
    (("train", "engineer", "--env", "household", "--stage", "data", "--dry-run", "--out", "{out}"),
     ("--stage data trains nothing", "use --stage sft or --stage grpo")),
    (("train", "engineer", "--env", "household", "--stage", "sft", "--dry-run", "--out", "{out}",
      "--accelerate-config", "{afile}"), ("--accelerate-config", "is not a valid accelerate config")),
    # show / export / packet: run directories and counts
    (("show", "{afile}"), ("'RUN_DIR'", "not a run directory: it is a file", "Pass OUT/RUN_ID")),
    (("show", "/dev/null"), ("'RUN_DIR'", "not a run directory", "Pass OUT/RUN_ID")),
    (("show", "{adir}"), ("'RUN_DIR'", "(no run.json)", "Pass OUT/RUN_ID")),
    (("show", "{run}", "--episodes", "-1"), ("'--episodes'", "greater than or equal to 0")),
    (("export", "{afile}"), ("'RUN_DIR'", "not a run directory")),
    (("export", "{run}", "--dest", "{afile}"), ("'--dest'", "is not a directory", "Pass a directory")),
    (("export", "{run}", "--dest", "/dev/null"), ("'--dest'", "is not a directory")),
    (("export", "{run}", "--dest", "{afile}/sub"), ("'--dest'", "is a file, so no directory")),
    (("packet", "{adir}"), ("'RUN_DIR'", "(no run.json)")),
    (("packet", "{run}", "--strategy", "bogus"), ("unknown packet strategy 'bogus'", "round_robin")),
    (("packet", "{run}", "--max-traces", "0"), ("'--max-traces'", GE1)),
    (("packet", "{run}", "--token-budget", "0"), ("'--token-budget'", GE1)),
    # improve / demo
    (("improve", "--env", "household", "--agent", "random", "--engineer", "operators", "--out", "/dev/null"),
     ("'--out'", "is not a directory")),
    (("improve", "--env", "household", "--agent", "random", "--engineer", "llm:nope", "--out", "{out}"),
     ("engineer 'llm:nope'", "PREFIX:TARGET")),
    (("improve", "--env", "household", "--agent", "random", "--engineer", "llm:hf:{adir}/x",
      "--out", "{out}"),
     ("engineer 'llm:hf:", "does not exist", "hf:PATH")),
    (("improve", "--env", "household", "--agent", "solver", "--engineer", "wizard", "--out", "{out}"),
     ("unknown engineer 'wizard'", "operators")),
    (("improve", "--env", "household", "--agent", "gold", "--engineer", "operators", "--batch-size", "2",
      "--eval-n", "2", "--out", "{out}"), ("gold agent needs", "--agent solver")),
    (("improve", "--env", "household", "--agent", "random", "--engineer", "operators", "--max-regressions",
      "-1", "--out", "{out}"), ("--max-regressions", "see `reharness improve --help`")),
    (("improve", "--env", "household", "--agent", "random", "--engineer", "operators", "--executor", "dask",
      "--out", "{out}"), ("'--executor'", "'local', 'ray'")),
    (("improve", "--env", "household", "--agent", "random", "--engineer", "operators", "--ray-actors", "2",
      "--out", "{out}"), ("--ray-actors only applies to --executor ray",)),
    (("demo", "--out", "{afile}"), ("'--out'", "is not a directory")),
    (("demo", "--batch-size", "0", "--out", "{out}"), ("--batch-size", "greater than 0")),
    # patch try
    ((*TRY, "{ctx}", "--timeout", "-1"),
     ("'--timeout'", "-1.0 is not greater than 0", "Pass a positive number")),
    ((*TRY, "{ctx}", "--timeout", "0"),
     ("'--timeout'", "not greater than 0")),
    ((*TRY, "{adir}"),
     ("'--ctx'", "is a directory, not a file")),
    ((*TRY, "{missing}"), ("'--ctx'", "does not exist")),
    ((*TRY, "{text}"),
     ("--ctx file", "is not valid JSON", "pass a JSON object")),
    ((*TRY, "{ctx}", "--nb", "{binary}"),
     ("--nb file", "is not valid JSON")),
    ((*TRY, "{list}"), ("--ctx and --nb must each hold a JSON object", "write an object")),
    (("patch", "try", "{shop}", "--hook", "bogus", "--ctx", "{ctx}"), ("unknown hook 'bogus'", "on_init")),
    ((*TRY, "{ctx}", "--isolation", "none"),
     ("'--isolation'", "'standard', 'strict'")),
    # agent
    (("agent", "eval", "--agent", "household-S", "--n", "0"), ("'--n'", GE1)),
    (("agent", "eval", "--agent", "household-S", "--max-new-tokens", "0"), ("'--max-new-tokens'", GE1)),
    (("agent", "eval", "--agent", "{afile}"), ("--agent", "not a directory", "model directory")),
    (("agent", "eval", "--agent", "{adir}"), ("--env is required", "pass --env ENV")),
    (("agent", "eval", "--agent", "nope-Q", "--no-train"), ("unknown tiny agent 'nope-Q'", "did you mean")),
    (("agent", "train", "--env", "db", "--steps", "0"), ("'--steps'", GE1)),
    (("agent", "train", "--env", "db", "--perturb-prob", "2"), ("'--perturb-prob'", "less than or equal")),
    (("agent", "train", "--env", "db", "--learning-rate", "0"), ("'--learning-rate'", "not greater than 0")),
    (("agent", "train", "--env", "db", "--out", "/dev/null"), ("'--out'", "is not a directory")),
    (("agent", "train", "--env", "db", "--size", "X"), ("no tiny-agent recipe", "--size one of")),
    (("agent", "train", "--env", "db", "--init", "tiny:nope-Q"), ("unknown tiny agent 'nope-Q'", "known:")),
    # train / experiment
    (("train", "engineer", "--env", "db", "--stage", "bogus"), ("unknown --stage 'bogus'", "data, sft")),
    (("train", "engineer", "--env", "db", "--out", "/dev/null"), ("'--out'", "is not a directory")),
    (("train", "engineer", "--env", "db", "--stage", "grpo", "--k", "1"), ("--k", "greater than or equal")),
    (("train", "engineer", "--env", "db", "--batch-size", "0"), ("--batch-size", "greater than 0")),
    (("train", "engineer", "--env", "db", "--steps", "0"), ("'--steps'", GE1)),  # `0 or 300` was 300
    (("train", "engineer", "--env", "db", "--max-new-tokens", "0"), ("'--max-new-tokens'", GE1)),
    (("train", "engineer", "--env", "db", "--base", "{adir}"), ("--base", "not a model dir", "omit --base")),
    (("train", "engineer", "--env", "db", "--device", "tpu"), ("--device", "'cpu' or 'cuda'")),
    (("train", "engineer", "--env", "db", "--teacher", "llm:nope"), ("engineer 'llm:nope'", "PREFIX:TARGET")),
    (("train", "engineer", "--env", "all", "--agent", "tiny:{{env}}_S"), ("'household_S' is malformed",)),
    (("train", "engineer", "--env", "db", "--agent", "bogus"), ("unknown agent 'bogus'", "solver")),
    (("train", "engineer", "--env", "kitchen"), ("unknown environment 'kitchen'", "known:")),
    (("train", "policy", "--env", "kitchen"), ("unknown environment 'kitchen'", "known:")),
    (("train", "policy", "--env", "db", "--rescue", "bogus"), ("'--rescue'", "'router', 'random'")),
    (("train", "policy", "--env", "db", "--route", "oracle"), ("'--route'", "'validation', 'profile'")),
    (("train", "policy", "--env", "db", "--k", "1"), ("'--k'", "greater than or equal to 2")),
    (("train", "policy", "--env", "db", "--steps", "0"), ("'--steps'", GE1)),
    (("train", "policy", "--env", "db"), ("--rescue router needs --pool POOL", "pool evolve")),
    (("train", "policy", "--env", "db", "--rescue", "none", "--agent", "solver"), ("cannot be trained",
     "tiny:ENV-SIZE")),
    (("train", "policy", "--env", "db", "--rescue", "none", "--agent", "tiny:BAD"), ("'BAD' is malformed",)),
    (("train", "policy", "--env", "db", "--rescue", "none", "--tasks-per-step", "3", "--micro-batches", "5"),
     ("must divide by micro_batches",)),
    (("train", "policy", "--env", "db", "--pool", "{adir}"), ("has no pool.json", "pool evolve")),
    (("train", "policy", "--env", "household", "--pool", "{shoppool}"), ("evolved for env 'shop'",
     "--env household")),
    (("train", "policy", "--env", "db", "--rescue", "none", "--out", "/dev/null"), ("'--out'", "not a dir")),
    (("experiment", "r1", "--env", "bogus"), ("unknown environment 'bogus'", "known:")),
    (("experiment", "r1", "--env", "db", "--agent", "sovler"), ("unknown agent 'sovler'", "mean 'solver'")),
    (("experiment", "r1", "--env", "db", "--agent", "random", "--transfer-agent", "nope"), ("agent 'nope'",)),
    (("experiment", "r1", "--env", "db", "--out", "/dev/null"), ("'--out'", "is not a directory")),
    (("experiment", "r1", "--env", "db", "--k", "1"), ("--k", "greater than or equal")),
    (("experiment", "r1", "--env", "db", "--editor", "nosuch:m"), ("--editor 'nosuch:m'", "known: openai")),
    (
        ("experiment", "r1", "--env", "db", "--editor", "tiny:db-S", "--editor-constrain"),
        ("--editor-constrain needs --editor-language program",),
    ),
    (
        ("experiment", "r1", "--env", "db", "--editor", "tiny:db-S", "--editor-language", "program",
         "--editor-prompt", "full"),
        ("--editor-prompt full asks for hook code",),
    ),
    (("experiment", "s", "--env", "bogus"), ("unknown environment 'bogus'", "known:")),
    ((*ES, "--methods", "none,routr"), ("--methods entry 'routr'", "'router'")),
    ((*ES, "--methods", "sibling-only"), ("'sibling-only'", "not supported")),
    ((*ES, "--pool", "{missing}"), ("does not exist", "pool evolve")),
    ((*ES, "--pool", "{adir}"), ("has no pool.json", "pool evolve")),
    ((*ES, "--pool", "{hpool}"), ("for env 'household', not 'shop'", "--env shop")),
    (("experiment", "s", "--env", "all", "--pool", "{hpool}"), ("one pool for 3 environments", "{env}")),
    ((*ES, "--agent", "solver"), ("cannot be trained in-process", "hf:DIR")),
    ((*ES, "--k", "1"), ("'--k'", "greater than or equal")),
    ((*ES, "--out", "/dev/null"), ("'--out'", "is not a directory")),
    # pool
    (("pool", "evolve", "--env", "kitchen", "--agent", "solver"), ("environment 'kitchen'", "known:")),
    (("pool", "evolve", "--env", "household", "--agent", "sovler"), ("unknown agent 'sovler'", "'solver'")),
    ((*EV, "--engineer", "llm:nope"), ("engineer 'llm:nope'",)),
    ((*EV, "--size", "0"), ("'--size'", GE1)),
    ((*EV, "--k", "0"), ("'--k'", GE1)),
    ((*EV, "--lambda", "-1"), ("'--lambda'", "greater than or equal to 0")),
    ((*EV, "--out", "/dev/null"), ("'--out'", "is not a directory")),
    ((*EV, "--executor", "ray", "--ray-actors", "0"), ("'--ray-actors'", GE1)),
    ((*EV, "--ray-address", "ray://head"), ("'--ray-address'", "is not a Ray address")),
    ((*EV, "--directions", "loop_recovry"), ("direction 'loop_recovry'", "loop_recovery")),
    ((*EV, "--directions", "{syntax}"), ("syntax.yaml is not valid YAML", "fix the YAML")),
    ((*EV, "--holdout-direction", "nope"), ("unknown direction 'nope'",)),
    (("pool", "show", "{missing}"), ("does not exist", "pool evolve")),
    (("pool", "show", "{afile}"), ("is a file", "pool.json")),
    (("pool", "eval", "{adir}", "--agent", "solver"), ("has no pool.json", "pool evolve")),
    (("pool", "eval", "{adir}", "--agent", "solver", "--n", "0"), ("'--n'", GE1)),
    (("pool", "eval", "{adir}", "--agent", "solver", "--route", "best"), ("--route", "profile or vote")),
    (("pool", "reanchor", "{adir}", "--agent", "solver"), ("has no pool.json", "pool evolve")),
    (("pool", "reanchor", "{missing}", "--agent", "solver"), ("does not exist",)),
    (("run", "--env", "household", "--route", "rank1"), ("--route needs --pool", "--pool POOL")),
    (("run", "--env", "household", "--pool", "{adir}", "--route", "best"), ("rank1 or oracle",)),
    (("run", "--env", "household", "--pool", "{adir}", "--patch", "{shop}"), ("cannot be combined",)),
    (("run", "--env", "household", "--pool", "{adir}"), ("has no pool.json",)),
    (("view", "{missing}"), ("does not exist", "run directory")),
    (("view", "{adir}"), ("nothing reharness view can show", "improve")),
    (("view", "{adir}", "--port", "70000"), ("'--port'", "65535")),
    (("show", "{run}", "--code", "bogus"), ("not a failure code", "step_limit")),
]  # fmt: skip
# The commands the cases cover: every command of `reharness --help` that takes input.
COVERED = {
    " ".join(a[:2]) if a[0] in ("patch", "agent", "train", "experiment", "pool") else a[0] for a, _ in CASES
}


def test_the_cases_cover_every_command() -> None:
    commands = {c.name for c in typer.main.get_command(app).commands.values()}  # type: ignore[attr-defined]
    groups = {
        "patch": ["try"],
        "agent": ["eval", "train"],
        "train": ["engineer", "policy"],
        "experiment": ["r1", "s"],
        "pool": ["evolve", "show", "eval", "reanchor"],
    }
    expected = (commands - set(groups) - {"envs"}) | {f"{g} {c}" for g, cs in groups.items() for c in cs}
    assert expected <= COVERED, sorted(expected - COVERED)


@pytest.mark.parametrize(("args", "fragments"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_a_clear_error(
    args: tuple[str, ...],
    fragments: tuple[str, ...],
    files: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out"
    code, text, escaped = invoke(fill(args, files, out), monkeypatch)
    assert escaped is None, f"{type(escaped).__name__}: {escaped}"
    assert code == 2 and "Traceback" not in text, text
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in: {text}"
    assert not out.exists() or not any(out.rglob("*")), sorted(map(str, out.rglob("*")))  # nothing written


@pytest.mark.parametrize(
    "args",
    [
        ("--env", "shop", "--agent", "gold"),
        ("--env", "db", "--patch", "{shop}"),
        ("--env", "db", "--n", "100000000"),
        ("--env", "db", "--split", "tset"),
        ("--env", "db", "--harness", "{text}"),
        ("--env", "db", "--data", "{list}"),
    ],
)
def test_a_refused_run_leaves_no_run_folder_or_index_row(
    args: tuple[str, ...], files: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "runs"
    out.mkdir()
    code, text, escaped = invoke(fill(("run", *args, "--out", str(out)), files, out), monkeypatch)
    assert escaped is None and code == 2 and "how to fix" in text, text
    assert "━" not in text, text  # refused before a progress bar starts
    assert list(out.iterdir()) == []  # no OUT/RUN_ID, no index.sqlite


def test_patch_check_reports_bad_files_in_its_contract(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``patch check`` reports a bad file as an invalid patch (exit 1, the JSON contract), never a crash."""
    expected = {
        "adir": "is a directory, not a patch file",
        "text": "invalid JSON at line 1 column 1",
        "empty": "the file is empty",
        "binary": "not valid UTF-8 at byte 8",
        "missing": "no such file",
        "afile": "this document is a plain string",
    }
    for name, message in expected.items():
        monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 400)
        result = CliRunner().invoke(app, ["patch", "check", files[name], "--json"])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), name
        data = json.loads(result.stdout)
        assert data["valid"] is False and message in data["errors"][0]["message"], (name, data)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("run", "--env", "db", "--n", "0"), "Invalid value for '--n'"),
        (("show", "/dev/null"), "is not a run directory"),
        (("run", "--env", "db", "--harness", "{binary}"), "is not UTF-8 text"),
    ],
)
def test_as_a_subprocess_too(
    args: tuple[str, ...], fragment: str, files: dict[str, str], tmp_path: Path
) -> None:
    """The installed entry point behaves the same (no traceback on a real terminal-less stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "reharness", *fill(args, files, tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "300", "TERMINAL_WIDTH": "300"},
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert fragment in proc.stderr

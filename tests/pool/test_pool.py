"""The pool layer's data: repair directions, siblings (H0 + delta + patches) and the frozen pool directory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from reharness.core.errors import ConfigError, DataError, UnknownNameError
from reharness.engineer.operators.registry import shipped_operators
from reharness.envs.registry import make_env
from reharness.failures.codes import ALL_CODES
from reharness.patches.model import load_patch
from reharness.pool import (
    PolicyRef,
    Pool,
    Provenance,
    Sibling,
    builtin_directions,
    directions_of,
    load_directions,
    load_pool,
)
from reharness.pool.directions import cluster_of
from reharness.runtime import EpisodeRunner, Harness, RandomAgent, base_harness_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "patches"
SNAP = EXAMPLES / "household_snap_to_admissible.yaml"

# the clusters the pool issue asks for, by direction
REQUIRED = {
    "action_validity": {"invalid_action", "format_error"},
    "loop_recovery": {"repeated_action", "no_progress", "step_limit"},
    "goal_tracking": {"premature_answer", "wrong_answer"},
    "error_feedback": {"tool_error", "sql_error"},
    "state_memory": {"no_progress"},
    "tool_protocol": {"format_error", "tool_error"},
}


def test_builtin_directions_cover_the_required_clusters() -> None:
    directions = {d.name: d for d in builtin_directions()}
    assert set(REQUIRED) <= set(directions)
    for name, codes in REQUIRED.items():
        assert codes <= set(directions[name].codes), name
        assert directions[name].description.strip()
    assert set().union(*(d.codes for d in directions.values())) <= {c.value for c in ALL_CODES}


def test_every_operator_is_tagged_with_a_direction() -> None:
    untagged = [op.name for op in shipped_operators() if not directions_of(op.name)]
    assert untagged == []
    assert directions_of("snap_to_admissible") == ("action_validity",)
    assert set(directions_of("loop_breaker")) == {"loop_recovery", "state_memory"}
    # an operator's own failure codes meet the cluster of every direction it is tagged with
    by_name = {d.name: d for d in builtin_directions()}
    for op in shipped_operators():
        for direction in directions_of(op.name):
            assert set(op.codes) & set(by_name[direction].codes), (op.name, direction)


def test_cluster_of_a_failure() -> None:
    directions = builtin_directions()
    assert cluster_of(["sql_error"], directions) == ("error_feedback",)
    assert set(cluster_of(["repeated_action"], directions)) == {"loop_recovery"}
    assert cluster_of(["policy_error"], directions) == ()


def test_select_and_user_directions(tmp_path: Path) -> None:
    picked = load_directions("loop_recovery,action_validity")
    assert [d.name for d in picked] == ["loop_recovery", "action_validity"]
    with pytest.raises(UnknownNameError, match="loop_recovery"):
        load_directions("loop_recovry")
    user = tmp_path / "mine.yaml"
    user.write_text(
        "format: reharness-directions-v1\ndirections:\n"
        "  - {name: answer_format, description: Write answers in the exact form asked., "
        "codes: [wrong_answer], operators: [answer_grounding], config_fields: [system_prompt]}\n"
    )
    names = [d.name for d in load_directions(user)]
    assert names[-1] == "answer_format" and "goal_tracking" in names


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("directions: [{name: x, description: d, codes: [no_such_code]}]", "no_such_code"),
        ("directions: [{name: x, description: d, codes: [wrong_answer], operators: [nope]}]", "nope"),
        ("directions: [{name: x, description: d, codes: [wrong_answer], config_fields: [colour]}]", "colour"),
        ("directions: [{name: x, codes: [wrong_answer]}]", "description"),
        (
            "directions: [{name: x, description: d, codes: [wrong_answer]}, {name: x, description: e, "
            "codes: [sql_error]}]",
            "more than once",
        ),
        ("directions: [{name: loop_recovery, description: d, codes: [wrong_answer]}]", "redefines"),
        ("directions: [{name: x, description: d, codes: [wrong_answer]", "not valid YAML"),
        ("- just a list", "mapping"),
    ],
)
def test_bad_directions_files_are_named(tmp_path: Path, body: str, needle: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(body)
    with pytest.raises(ConfigError) as info:
        load_directions(bad)
    assert needle in str(info.value) and "bad.yaml" in str(info.value)


def _sibling(**kw) -> Sibling:  # type: ignore[no-untyped-def]
    values = dict(name="snap", direction="action_validity", base=base_harness_config("household"))
    values.update(kw)
    return Sibling(**values)  # type: ignore[arg-type]


def test_sibling_identity_is_a_content_hash() -> None:
    patch = load_patch(SNAP)
    a = _sibling(delta={"show_admissible": False}, patches=[patch])
    same = _sibling(name="other name", delta={"show_admissible": False}, patches=[patch])
    other_delta = _sibling(delta={"show_admissible": False, "history_window": 4}, patches=[patch])
    no_patch = _sibling(delta={"show_admissible": False})
    assert a.id == same.id  # names and descriptions are not content
    assert len({a.id, other_delta.id, no_patch.id}) == 3
    other_h0 = _sibling(base=base_harness_config("household").model_copy(update={"history_window": 2}))
    assert other_h0.id != _sibling().id


def test_sibling_delta_is_validated() -> None:
    with pytest.raises(ConfigError, match="colour"):
        _sibling(delta={"colour": "red"})
    with pytest.raises(ConfigError, match="env"):
        _sibling(delta={"env": "shop"})
    with pytest.raises(ConfigError, match="history_window"):
        _sibling(delta={"history_window": -1})
    with pytest.raises(ConfigError, match="shop"):
        _sibling(patches=[load_patch(EXAMPLES / "shop_loop_breaker.json")])


def test_sibling_runs_as_an_ordinary_harness() -> None:
    """The delta and the patch both take effect in a real episode under the random agent."""
    env = make_env("household", split="valid")
    task = env.get_task(0)
    sibling = _sibling(delta={"step_limit": 4}, patches=[load_patch(SNAP)])
    harness = sibling.harness()
    assert isinstance(harness, Harness) and harness.config.step_limit == 4
    assert harness.config.name == "snap" and len(harness.overlays) == 1
    record = asyncio.run(EpisodeRunner(env, RandomAgent(), harness).run(task, seed=3))
    assert record.num_steps <= 4
    base = asyncio.run(EpisodeRunner(env, RandomAgent(), Harness.base("household")).run(task, seed=3))
    assert base.num_steps > 4  # the random agent does not finish in 4 steps under H0
    for overlay in harness.overlays:
        asyncio.run(overlay.close())


def _pool() -> Pool:
    h0 = base_harness_config("household")
    siblings = [
        Sibling(
            name="snap",
            direction="action_validity",
            base=h0,
            patches=[load_patch(SNAP)],
            description="snap near-miss commands",
            provenance=Provenance(engineer="operators", seed=1, generation=2),
            evidence={"rescued": 3, "broken": 0},
        ),
        Sibling(name="short-history", direction="state_memory", base=h0, delta={"history_window": 6}),
    ]
    return Pool("household", h0, siblings, PolicyRef(spec="random"), builtin_directions()[:2])


def test_pool_round_trip(tmp_path: Path) -> None:
    pool = _pool()
    root = pool.save(tmp_path / "pool")
    doc = json.loads((root / "pool.json").read_text())
    assert doc["format"] == "reharness-pool-v1"
    assert [(s["id"], s["name"], s["direction"]) for s in doc["siblings"]] == [
        (s.id, s.name, s.direction) for s in pool.siblings
    ]
    loaded = load_pool(root)
    assert [s.id for s in loaded.siblings] == [s.id for s in pool.siblings]
    assert loaded.h0_identity == pool.h0_identity == Harness.base("household").identity
    assert loaded.get("snap").provenance.generation == 2
    assert loaded.get(pool.siblings[1].id[:8]).delta == {"history_window": 6}
    assert loaded.document() == pool.document()
    with pytest.raises(ConfigError, match="short-history"):
        loaded.get("nope")


def _edit(root: Path, fn) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads((root / "pool.json").read_text())
    fn(doc)
    (root / "pool.json").write_text(json.dumps(doc))


def test_tampered_pools_are_refused(tmp_path: Path) -> None:
    root = _pool().save(tmp_path / "pool")
    pristine = (root / "pool.json").read_text()

    _edit(root, lambda d: d["siblings"][0].update(description="edited"))
    with pytest.raises(DataError, match="edited after the pool was frozen"):
        load_pool(root)

    # an editor who also recomputes the document hash is still caught by the sibling's content id
    def forge(d: dict) -> None:
        d["siblings"][1]["delta"] = {"history_window": 2}
        from reharness.pool.pool import PoolDocument

        d["content_hash"] = PoolDocument.model_validate(d).body_hash()

    (root / "pool.json").write_text(pristine)
    _edit(root, forge)
    with pytest.raises(DataError, match=r"siblings\.1.*field 'id'"):
        load_pool(root)

    (root / "pool.json").write_text(pristine)
    patch_file = next((root / "patches").iterdir())
    patch_file.write_text(patch_file.read_text().replace("cutoff=0.75", "cutoff=0.5"))
    with pytest.raises(DataError, match="was edited"):
        load_pool(root)


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        (
            lambda root: (root / "pool.json").write_text('{"format": "reharness-pool-v1", "env": "hou'),
            "not valid JSON",
        ),
        (lambda root: (root / "pool.json").write_text("[]"), "JSON object"),
        (lambda root: (root / "pool.json").write_bytes(b"\xff\xfe\x00"), "not a text file"),
        (lambda root: _edit(root, lambda d: d.pop("siblings")), "siblings"),
        (lambda root: _edit(root, lambda d: d["siblings"][0].pop("name")), "siblings.0.name"),
        (lambda root: _edit(root, lambda d: d.update(format="v0")), "format"),
        (lambda root: next((root / "patches").iterdir()).unlink(), "is missing"),
        (lambda root: (root / "pool.json").unlink(), "has no pool.json"),
    ],
)
def test_corrupt_pools_name_the_file_and_field(tmp_path: Path, damage, needle: str) -> None:  # type: ignore[no-untyped-def]
    root = _pool().save(tmp_path / "pool")
    damage(root)
    with pytest.raises((DataError, ConfigError)) as info:
        load_pool(root)
    assert needle in str(info.value)


def test_patch_files_outside_the_pool_are_refused(tmp_path: Path) -> None:
    root = _pool().save(tmp_path / "pool")
    outside = tmp_path / "evil.yaml"
    outside.write_text(SNAP.read_text())

    def escape(d: dict) -> None:
        d["siblings"][0]["patches"][0]["file"] = "../evil.yaml"
        from reharness.pool.pool import PoolDocument

        d["content_hash"] = PoolDocument.model_validate(d).body_hash()

    _edit(root, escape)
    with pytest.raises(DataError, match="outside the pool"):
        load_pool(root)


def test_pool_paths_that_are_not_pools(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_pool(tmp_path / "none")
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        load_pool(file)
    with pytest.raises(ConfigError, match="is a file"):
        _pool().save(file)


def test_a_pool_refuses_duplicates_and_foreign_siblings() -> None:
    h0 = base_harness_config("household")
    twin = Sibling(name="a", direction="loop_recovery", base=h0, delta={"history_window": 3})
    again = Sibling(name="b", direction="loop_recovery", base=h0, delta={"history_window": 3})
    with pytest.raises(ConfigError, match="twice"):
        Pool("household", h0, [twin, again], PolicyRef(spec="random"))
    foreign = Sibling(name="c", direction="loop_recovery", base=base_harness_config("shop"))
    with pytest.raises(ConfigError, match="H0"):
        Pool("household", h0, [foreign], PolicyRef(spec="random"))

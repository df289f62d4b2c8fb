"""Policy GRPO with sibling rescue, for real at micro scale: the shipped tiny household agent, a pool whose
H0 has a 3-step budget (no household task fits in it, so every H0 group fails) and siblings that lift the
budget (they can rescue), TRL doing the optimisation. Checks the rescue bookkeeping, the decision log, the
metrics, the model directory (it runs as ``hf:DIR``), an exact resume, and the CLI's JSON contract."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

from reharness.envs.registry import make_env  # noqa: E402
from reharness.failures import failure_codes  # noqa: E402
from reharness.pool import PolicyRef, Pool, Sibling, builtin_directions  # noqa: E402
from reharness.pool.decision import read_log  # noqa: E402
from reharness.pool.profile import measure_profile  # noqa: E402
from reharness.runtime import EpisodeRunner, Harness, SolverAgent, base_harness_config  # noqa: E402
from reharness.runtime.harness import HarnessConfig  # noqa: E402
from reharness.store.records import EpisodeRecord  # noqa: E402
from reharness.training.policy_config import PolicyTrainConfig  # noqa: E402
from reharness.training.policy_train import train_policy  # noqa: E402

MICRO = dict(env="household", agent="tiny:household-S", k=2, tasks_per_step=2, micro_batches=2, concurrency=8)


def run_episodes(config: HarnessConfig, n: int) -> list[EpisodeRecord]:
    """The scripted solver on valid tasks 0..n-1 under ``config`` (for the pool's validation profile)."""

    async def go() -> list[EpisodeRecord]:
        env, out = make_env("household", split="valid"), []
        for i in range(n):
            record = await EpisodeRunner(env, SolverAgent(), Harness(config)).run(env.get_task(i), seed=0)
            record.failure_codes = failure_codes(record)
            out.append(record)
        return out

    return asyncio.run(go())


def tight_pool(root: Path) -> Path:
    """A saved pool: H0 with step_limit 3; ``long-budget`` (step_limit 30) and ``mid-budget`` (12)."""
    h0 = base_harness_config("household").model_copy(update={"step_limit": 3})
    siblings = [
        Sibling(
            name="long-budget", direction="loop_recovery", base=h0, delta={"step_limit": 30}, description="30"
        ),
        Sibling(
            name="mid-budget", direction="state_memory", base=h0, delta={"step_limit": 12}, description="12"
        ),
    ]
    pool = Pool("household", h0, siblings, PolicyRef(spec="solver"), builtin_directions())
    pool.save(root)
    h0_records = run_episodes(h0, n=6)
    others = {s.id: run_episodes(s.harness().config, n=6) for s in siblings}
    profile = measure_profile(pool, h0_records, others, policy=PolicyRef(spec="solver"), split="valid")
    from reharness.pool.pool import load_pool

    loaded = load_pool(root)
    profile.save(loaded)
    return root


@pytest.fixture(scope="module")
def pool_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tight_pool(tmp_path_factory.mktemp("pool"))


def metrics(out: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def recording_trainer(seen: dict[str, list]) -> Any:  # type: ignore[type-arg]
    """The policy trainer, recording each step's rescue report and every row that reaches TRL's loss
    (prompt ids, the policy tokens of the completion) — an observer on top of the real trainer."""
    from reharness.training.policy_grpo import _trainer_class

    class Recording(_trainer_class()):  # type: ignore[misc]
        def _generate_and_score_completions(self, inputs: Any) -> Any:
            out = super()._generate_and_score_completions(inputs)
            seen["reports"].append(self.session.last_report)
            return out

        def compute_loss(self, model: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
            rows = zip(
                inputs["prompt_ids"],
                inputs["prompt_mask"],
                inputs["completion_ids"],
                inputs["tool_mask"],
                strict=True,
            )
            for prompt, prompt_mask, completion, loss_mask in rows:
                if int(loss_mask.sum()) > 0:  # padding rows train nothing
                    ids = completion[: len(loss_mask)].tolist()
                    seen["rows"].append((prompt[prompt_mask.bool()].tolist(), ids))
            return super().compute_loss(model, inputs, *args, **kwargs)

    return lambda: Recording


def trained_from(row: tuple[list[int], list[int]], rollouts: list[Any]) -> bool:
    """Whether a trained row starts with one turn of one of ``rollouts`` (its prompt, then its reply)."""
    prompt, completion = row
    return any(
        t.prompt_ids == prompt and completion[: len(t.completion_ids)] == t.completion_ids
        for r in rollouts
        for t in r.turns
    )


def test_router_rescue_trains_a_deployable_policy_and_resumes_exactly(
    pool_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, list] = {"reports": [], "rows": []}  # type: ignore[type-arg]
    monkeypatch.setattr("reharness.training.policy_train._trainer_class", recording_trainer(seen))
    out = tmp_path / "run"
    config = PolicyTrainConfig(
        **MICRO,
        pool=str(pool_dir),
        rescue="router",
        steps=2,
        save_steps=1,
        reanchor_every=1,
        reanchor_n=4,
        out=str(out),
    )
    summary = train_policy(config)
    lines = metrics(out)
    assert [m["step"] for m in lines] == [1, 2] and summary["steps"] == 2
    for m in lines:
        assert m["all_fail_groups"] == 2 and m["h0_success"] == 0.0  # nothing fits in 3 steps
        assert m["rescues_tried"] == 2 and m["costs"]["episodes"] == {"h0": 4, "rescue": 4}
        assert {r["name"] for r in m["rescues"]} == {"long-budget"}  # the validation rule's best sibling
        assert math.isfinite(m["trl"]["loss"]) and math.isfinite(m["trl"]["grad_norm"])
    # seed 0: step 1's rescues all fail (no variance, no rows, no gradient); step 2 rescues one group with 1
    # success of 2 (its two episodes train, each one row)
    assert [m["rescues_succeeded"] for m in lines] == [0, 1] and [m["rows"] for m in lines] == [0, 2]
    assert lines[0]["trl"]["grad_norm"] == 0.0 < lines[1]["trl"]["grad_norm"]
    assert [m["rescued_successes"] for m in lines] == [0, 1]
    # the rows that reached the loss are the rescued group's trajectories, never the failed H0 group's
    reports = seen["reports"]
    rescued = [r for rep in reports for g in rep.groups if g.rescue is not None for r in g.rollouts]
    base = [r for rep in reports for g in rep.groups for r in g.base]
    assert len(seen["rows"]) == 2 and {r.harness for r in rescued} == {lines[1]["rescues"][0]["harness"]}
    assert all(trained_from(row, rescued) and not trained_from(row, base) for row in seen["rows"])
    assert summary["rollouts"] == 16
    # the pool's profile was measured greedily, the rollouts sample at 1.0: said loudly, with the fix
    assert "temperature 0, the rescue rollouts sample at 1" in summary["profile_warning"]
    assert "--reanchor-at-start" in summary["profile_warning"]
    # re-anchored before step 2 with the step-1 weights: a profile of another policy, on valid tasks
    assert "reanchor" not in lines[0] and lines[1]["reanchor"]["step"] == 1
    profile = json.loads((out / "profiles" / "step-00001.json").read_text())
    evolved = json.loads((pool_dir / "profile.json").read_text())["policy_hash"]
    assert profile["policy_hash"] == lines[1]["reanchor"]["policy_hash"] != evolved
    assert profile["policy"]["spec"].startswith("train-policy:") and profile["split"] == "valid"
    assert summary["rescues"]["tried"] == 4
    succeeded = sum(m["rescues_succeeded"] for m in lines)
    assert summary["rescues"]["succeeded"] == succeeded
    # the router's log, read back from disk: every decision with its reasons, model calls and outcome
    log = (out / "decisions.jsonl").read_text().splitlines()
    decisions = read_log(out / "decisions.jsonl")
    assert len(decisions) == 4 and len(log) == 8  # one decision line and one outcome line per rescue
    tried = [(a["task_index"], a["harness"]) for m in lines for a in m["rescues"]]
    assert [d.choice[0] for d in decisions] == [h for _, h in tried]
    for decision, attempt in zip(decisions, [a for m in lines for a in m["rescues"]], strict=True):
        assert decision.decision_id == attempt["decision_id"] and decision.strategy == "validation"
        assert decision.candidates and all(c.reason for c in decision.candidates)
        assert attempt["reason"] == decision.candidates[0].reason
        assert decision.model_calls == sum(v.calls for v in decision.votes) == 0  # rule strategy: no model
        [outcome] = decision.outcome
        assert outcome.sibling_id == decision.choice[0] and outcome.attempts == 2
        assert outcome.successes == attempt["successes"]
    assert sum(d.outcome[0].successes > 0 for d in decisions) == succeeded == 1

    # the trained policy is an ordinary Hugging Face model directory: it runs as hf:DIR
    from reharness.envs.registry import make_env
    from reharness.runtime import EpisodeRunner, Harness
    from reharness.runtime.agent_specs import make_agent

    agent = make_agent(f"hf:{summary['path']}")
    env = make_env("household", split="test")
    record = asyncio.run(EpisodeRunner(env, agent, Harness.base("household")).run(env.get_task(0), seed=0))
    assert record.num_steps > 0 and record.error is None

    # a crash after the last checkpoint: the rerun trains no step (the same weights), and its summary still
    # counts the whole run
    weights = (out / "model" / "model.safetensors").read_bytes()
    shutil.rmtree(out / "model")
    finished = train_policy(config)
    assert finished["resumed_from"].endswith("checkpoint-2") and [m["step"] for m in metrics(out)] == [1, 2]
    assert finished["steps"] == 2 and (out / "model" / "model.safetensors").read_bytes() == weights
    assert finished["rows"] == summary["rows"]
    assert summary["rows"]["rows"] == sum(m["rows"] for m in lines) > 0
    assert finished["rescues"] == summary["rescues"] and finished["rollouts"] == summary["rollouts"]

    # lose the last step (as a crash after checkpoint 1 would) and rerun: step 2 is recomputed exactly
    shutil.rmtree(out / "checkpoints" / "checkpoint-2")
    shutil.rmtree(out / "model")
    again = train_policy(config)
    redone = metrics(out)
    assert [m["step"] for m in redone] == [1, 2]
    for key in ("tasks", "h0_success", "rescues", "rows", "trained_tokens", "costs"):
        if key == "costs":
            assert redone[1][key]["episodes"] == lines[1][key]["episodes"]
        else:
            assert redone[1][key] == lines[1][key], key
    assert redone[1]["trl"]["loss"] == pytest.approx(lines[1]["trl"]["loss"], rel=1e-4, abs=1e-6)
    assert again["rollouts"] == summary["rollouts"] and again["resumed_from"].endswith("checkpoint-1")
    assert again["rows"] == summary["rows"]
    log_again = (out / "decisions.jsonl").read_text().splitlines()
    assert len(log_again) == len(log)  # the redone step's decisions replaced, not duplicated

    # a crash before the first checkpoint: the rerun starts over, and its logs hold each step once
    shutil.rmtree(out / "checkpoints")
    shutil.rmtree(out / "model")
    third = train_policy(config)
    assert third["resumed_from"] is None and [m["step"] for m in metrics(out)] == [1, 2]
    assert [m["tasks"] for m in metrics(out)] == [m["tasks"] for m in lines]
    # every decision again, each once (the sampled actions' log-probabilities may differ in the last bits)
    assert len((out / "decisions.jsonl").read_text().splitlines()) == len(log)
    redecided = read_log(out / "decisions.jsonl")
    assert [(d.decision_id, d.choice, d.outcome) for d in redecided] == [
        (d.decision_id, d.choice, d.outcome) for d in decisions
    ]


def test_equal_compute_resampling_and_no_rescue(pool_dir: Path, tmp_path: Path) -> None:
    none = train_policy(
        PolicyTrainConfig(**MICRO, pool=str(pool_dir), rescue="none", steps=1, out=str(tmp_path / "none"))
    )
    assert none["rollouts"] == 4 and none["rescues"] == {"tried": 0, "succeeded": 0}
    line = metrics(tmp_path / "none")[0]
    assert line["rows"] == 0  # every group failed: no variance, nothing to learn (the problem rescue solves)
    resample = train_policy(
        PolicyTrainConfig(**MICRO, pool=str(pool_dir), rescue="resample", steps=1, out=str(tmp_path / "rs"))
    )
    line = metrics(tmp_path / "rs")[0]
    assert line["costs"]["episodes"] == {"h0": 4, "resample": 4} and resample["rollouts"] == 8
    assert {r["harness"] for r in line["rescues"]} == {"H0"}
    assert line["rescues_succeeded"] == 0  # fresh H0 rollouts cannot fit a task in 3 steps either
    placebo = train_policy(
        PolicyTrainConfig(**MICRO, pool=str(pool_dir), rescue="placebo", steps=1, out=str(tmp_path / "pl"))
    )
    line = metrics(tmp_path / "pl")[0]
    assert line["costs"]["episodes"] == {"h0": 4, "rescue": 4} and placebo["rollouts"] == 8
    assert {r["name"] for r in line["rescues"]} <= {"placebo-0", "placebo-1", "placebo-2", "placebo-3"}
    assert line["rescues_succeeded"] == 0  # a neutral sentence does not lift the 3-step budget


def test_reanchor_every_zero_never_measures_and_vote_logs_its_judges(pool_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "vote"
    config = PolicyTrainConfig(
        **MICRO, pool=str(pool_dir), rescue="router", route="vote", reanchor_every=0, steps=1, out=str(out)
    )
    summary = train_policy(config)
    assert not (out / "profiles").exists() and not (out / "reanchor").exists()  # the off switch
    assert summary["final_profile"] is None and "reanchor" not in summary["costs"]["episodes"]
    decisions = read_log(out / "decisions.jsonl")
    assert len(decisions) == 2 and all(d.strategy == "vote" for d in decisions)
    assert all([v.judge for v in d.votes] == ["direction", "behaviour"] for d in decisions)
    assert all(len(d.candidates) == 2 and d.choice[0] == d.outcome[0].sibling_id for d in decisions)


def test_cli_json_contract(pool_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from reharness.cli.main import app

    out = tmp_path / "cli"
    args = ["train", "policy", "--env", "household", "--pool", str(pool_dir), "--rescue", "random"]
    args += ["--k", "2", "--steps", "1", "--tasks-per-step", "2", "--micro-batches", "2", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(data) == {"path", "steps", "rollouts", "rescues", "train_seconds"}
    assert data["steps"] == 1 and data["rollouts"] == 8 and data["rescues"]["tried"] == 2
    assert (Path(data["path"]) / "config.json").is_file()
    saved = json.loads((out / "train_config.json").read_text())
    assert saved["rescue"] == "random" and saved["k"] == 2
    # one vocabulary of routes; a vote needs known judges
    for extra, message in (
        (["--route", "oracle"], "oracle"),
        (["--route", "vote", "--judges", "x"], "judges"),
    ):
        refused = CliRunner().invoke(app, [*args[:-2], *extra, "--out", str(tmp_path / "r")])
        assert refused.exit_code == 2 and message in refused.output, refused.output
    # the same --out with other options is refused (exit 2), nothing trained
    result = CliRunner().invoke(app, [*args[:-2], "--k", "4", "--out", str(out)])
    assert result.exit_code == 2
    assert "another --out" in result.output


@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_each_step_is_generated_once_whatever_the_loss(loss_type: str, tmp_path: Path) -> None:
    # dapo runs a chunk one row at a time, the other losses run it whole; either way TRL must not be asked
    # for the step's rollouts a second time (every rollout counted once, one metrics line per step)
    config = PolicyTrainConfig(**MICRO, rescue="none", steps=2, loss_type=loss_type, out=str(tmp_path / "r"))
    summary = train_policy(config)
    lines = metrics(tmp_path / "r")
    assert summary["rollouts"] == 2 * 2 * 2 and [line["step"] for line in lines] == [1, 2]
    assert all(line["costs"]["episodes"] == {"h0": 4} for line in lines)


def test_a_start_policys_decoding_defaults_reach_its_rollouts_and_the_trained_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model directory that declares ``end_at_action`` (a converted pretrained model does) is trained with
    replies ending at the action, and its trained ``model/`` declares the same, so ``hf:OUT/model`` decodes
    as the start policy did; a directory without the file trains and saves without it."""
    from reharness.models.hf_backend import AGENT_DEFAULTS, HFBackend, agent_defaults
    from reharness.models.registry import resolve_tiny
    from reharness.training.policy_grpo import _trainer_class

    start = tmp_path / "start"
    shutil.copytree(resolve_tiny("household-S"), start)
    (start / AGENT_DEFAULTS).write_text('{"end_at_action": true}')
    ends: list[bool] = []

    class Observing(_trainer_class()):  # type: ignore[misc]
        def _generate_and_score_completions(self, inputs: Any) -> Any:
            ends.append(self.session.backend.end_at_action)
            return super()._generate_and_score_completions(inputs)

    monkeypatch.setattr("reharness.training.policy_train._trainer_class", lambda: Observing)
    micro = dict(MICRO, agent=f"hf:{start}")
    summary = train_policy(PolicyTrainConfig(**micro, rescue="none", steps=1, out=str(tmp_path / "a")))
    assert ends and all(ends)
    assert agent_defaults(summary["path"]) == {"end_at_action": True}
    assert HFBackend(summary["path"], max_batch_size=1).end_at_action
    (start / AGENT_DEFAULTS).unlink()
    plain = train_policy(PolicyTrainConfig(**micro, rescue="none", steps=1, out=str(tmp_path / "b")))
    assert ends[-1] is False and agent_defaults(plain["path"]) == {}
    assert not HFBackend(plain["path"], max_batch_size=1).end_at_action


def test_lora_trains_low_rank_updates_and_saves_a_plain_model(tmp_path: Path) -> None:
    """--lora-rank R: every linear layer of the saved (merged) model differs from the start by a matrix of
    rank at most R, and nothing else changed; the directory is a plain model (no adapter files)."""
    pytest.importorskip("peft")
    import torch
    from safetensors.torch import load_file

    from reharness.models.registry import resolve_tiny

    config = PolicyTrainConfig(**MICRO, rescue="none", steps=2, lora_rank=2, out=str(tmp_path / "lora"))
    summary = train_policy(config)
    model_dir = Path(summary["path"])
    assert not (model_dir / "adapter_config.json").exists()
    start, trained = (
        load_file(str(resolve_tiny("household-S") / "model.safetensors")),
        load_file(str(model_dir / "model.safetensors")),
    )
    assert start.keys() == trained.keys()
    linear = [k for k in start if k.endswith("proj.weight")]
    assert linear
    moved = 0
    for key in start:
        delta = trained[key].float() - start[key].float()
        if key in linear:
            assert int(torch.linalg.matrix_rank(delta)) <= 2, key
            moved += bool(delta.abs().max() > 0)
        else:  # embeddings and norms are not adapted
            assert torch.equal(trained[key].float(), start[key].float()), key
    assert moved > 0  # the adapters learnt something


def test_lora_without_peft_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from reharness.core.errors import ConfigError
    from reharness.training.policy_train import lora_config

    monkeypatch.setitem(sys.modules, "peft", None)  # as if it were not installed
    with pytest.raises(ConfigError, match="needs the package peft") as error:
        lora_config(PolicyTrainConfig(**MICRO, rescue="none", lora_rank=4, out=str(tmp_path)))
    assert "pip install peft" in str(error.value.hint)
    assert lora_config(PolicyTrainConfig(**MICRO, rescue="none", out=str(tmp_path))) is None

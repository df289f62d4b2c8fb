"""Prefix reuse: replaying the baseline's outputs until a patched episode diverges changes no result.

Two targets whose replies are functions of the request: the clumsy household expert (seeded near-misses;
the context determines the env state it reads) and a real tiny Hugging Face model (random weights, sampled
at temperature 1 with per-request seeds; one request per batch and no KV prefix cache make decoding bit-exact
whatever ran before — with them, replayed and recomputed log-probabilities may differ in the last float bits).
Patches fire only from step 4 on, so most of each episode's prefix is reusable.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from clumsy import CONFIG, SNAP, SPEC, ClumsySolver, hook_patch

from reharness.core.types import ChatRequest, SamplingParams
from reharness.envs import make_env
from reharness.measure.baseline import Target, get_baseline
from reharness.measure.paired import evaluate_patch
from reharness.measure.prefix import PrefixReuseAgent, context_digest
from reharness.patches import Patch
from reharness.runtime import EpisodeRunner, FunctionAgent, Harness, RunSpec
from reharness.store.records import trajectory_digest
from reharness.store.run_store import RunStore

LATE = "ctx['step'] < 4 or "
LATE_SNAP = Patch(
    {"before_action": SNAP.hooks["before_action"].replace("if not text or", "if " + LATE + "not text or")},
    "snap near-misses from step 4 on",
    "household",
)


PROVENANCE = {"attempts", "retry_waits_s", "retry_errors", "replayed", "prompt_tokens"}


def _outputs(run_dir: str | None) -> list[object]:
    """What the policy replied at each step (not how the reply was obtained: called or replayed)."""
    return [
        (s.context_digest, s.output and s.output.model_dump(exclude=PROVENANCE))
        for e in RunStore(run_dir or "").episodes()
        for s in e.steps
    ]


def _replayed(run_dir: str | None) -> int:
    return sum(
        bool(s.output and s.output.replayed) for e in RunStore(run_dir or "").episodes() for s in e.steps
    )


async def test_reuse_gives_the_same_result_with_fewer_model_calls(tmp_path: Path) -> None:
    assert LATE in LATE_SNAP.hooks["before_action"]
    baseline = await get_baseline(SPEC, ClumsySolver(), Target(CONFIG), tmp_path)
    with_calls, without_calls = [0], [0]
    reused = await evaluate_patch(LATE_SNAP, baseline, ClumsySolver(calls=with_calls), tmp_path / "reuse")
    plain = await evaluate_patch(
        LATE_SNAP, baseline, ClumsySolver(calls=without_calls), tmp_path / "plain", prefix_reuse=False
    )
    assert reused.status == plain.status == "ok" and reused.delta > 0
    keys = ("delta", "success_delta", "rescued", "broken", "ci_low", "ci_high", "effect_steps")
    assert {k: getattr(reused, k) for k in keys} == {k: getattr(plain, k) for k in keys}
    a, b = RunStore(reused.run_dir or "").episodes(), RunStore(plain.run_dir or "").episodes()
    assert trajectory_digest(a) == trajectory_digest(b) and _outputs(reused.run_dir) == _outputs(
        plain.run_dir
    )
    assert plain.cost.reused_calls == 0 and plain.cost.model_calls == without_calls[0]
    assert reused.cost.model_calls == with_calls[0] < without_calls[0]
    assert reused.cost.model_calls + reused.cost.reused_calls == without_calls[0]
    assert reused.cost.reused_calls >= 3 * SPEC.n  # every episode replays at least its first 3 decisions
    assert _replayed(reused.run_dir) == reused.cost.reused_calls and _replayed(plain.run_dir) == 0


async def test_replay_needs_the_same_seed_and_context_and_stops_at_the_first_mismatch() -> None:
    seen: list[ChatRequest] = []

    def reply(request: ChatRequest) -> str:
        seen.append(request)
        return "Action: look"

    env = make_env("household", split="test")
    harness = Harness(CONFIG)
    record = await EpisodeRunner(env, FunctionAgent(reply), harness).run(env.get_task(0), seed=7)
    assert [s.context_digest for s in record.steps] == [context_digest(r.messages) for r in seen]
    calls: list[ChatRequest] = []
    inner = FunctionAgent(lambda r: calls.append(r) or "Action: inventory")
    wrapper = PrefixReuseAgent(inner, [record])
    episode = wrapper.start_episode(env, "text")
    replies = [await episode.complete(seen[0])]
    assert replies[0].text == "Action: look" and not calls  # replayed
    other_seed = seen[1].model_copy(update={"seed": seen[1].seed + 1})
    replies.append(await episode.complete(other_seed))
    assert replies[1].text == "Action: inventory" and len(calls) == 1
    replies.append(await episode.complete(seen[2]))
    assert replies[2].text == "Action: inventory"  # diverged: no replay any more
    fresh = wrapper.start_episode(env, "text")
    replies.append(await fresh.complete(seen[1]))
    assert replies[3].text == "Action: look" and len(calls) == 2
    # the replayed replies are marked as such (what stored costs are recounted from): 2 model calls, 2 reused
    assert [r.replayed for r in replies] == [True, False, False, True]


@pytest.mark.slow  # importing torch + transformers alone takes ~9 s on 2 busy cores
async def test_reuse_is_exact_for_a_real_sampled_model(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    import torch
    from tiny_model import build_tiny_model

    from reharness.models.hf_backend import HFBackend

    torch.set_num_threads(1)
    model = HFBackend(build_tiny_model(tmp_path / "model"), max_batch_size=1, prefix_cache_mb=0)
    config = CONFIG.model_copy(
        update={"step_limit": 5, "sampling": SamplingParams(temperature=1.0, max_tokens=6)}
    )
    spec = RunSpec(env="household", agent="tiny-random", split="test", n=2, seed=3, concurrency=2)
    baseline = await get_baseline(spec, model, Target(config), tmp_path)
    body = (
        "    nb['n'] = nb.get('n', 0) + 1\n    if nb['n'] >= 3:\n        return {'message': 'Think first.'}\n"
    )
    note = hook_patch("before_decision", body)  # from the third decision on (format errors do not step)
    reused = await evaluate_patch(note, baseline, model, tmp_path / "reuse")
    plain = await evaluate_patch(note, baseline, model, tmp_path / "plain", prefix_reuse=False)
    await model.close()
    assert reused.status == "ok" and reused.delta == plain.delta
    assert _outputs(reused.run_dir) == _outputs(plain.run_dir)  # token ids and logprobs included
    assert reused.cost.reused_calls == 2 * 2 and reused.cost.model_calls == plain.cost.model_calls - 4
    assert plain.cost.completion_tokens and plain.cost.prompt_tokens  # tokens counted when the model reports

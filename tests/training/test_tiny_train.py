"""Tiny-agent training: demonstrations, supervision masks, the real train → save → load → act path (micro)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from reharness.models.tiny.config import Recipe, recipe_for
from reharness.runtime import EpisodeRunner, Harness
from reharness.runtime.harness import base_harness_config
from reharness.training.tiny.demos import Demo, render_demos

HOUSEHOLD_VERBS = (
    "go",
    "open",
    "close",
    "take",
    "put",
    "examine",
    "use",
    "heat",
    "clean",
    "cool",
    "inventory",
    "look",
)


def test_demos_are_deterministic_and_follow_the_base_harness() -> None:
    first, stats = render_demos("household", 4, seed=3, perturb_prob=0.3)
    again, _ = render_demos("household", 4, seed=3, perturb_prob=0.3)
    other, _ = render_demos("household", 4, seed=4, perturb_prob=0.3)
    assert [(d.messages, d.supervised) for d in first] == [(d.messages, d.supervised) for d in again]
    assert [d.messages for d in first] != [d.messages for d in other]
    config = base_harness_config("household")
    for demo in first:
        roles = [m.role for m in demo.messages]
        assert roles[:2] == ["system", "user"]
        assert roles[2:] == ["assistant", "user"] * ((len(roles) - 3) // 2) + ["assistant"]
        assert demo.messages[0].content == config.system_prompt.format(
            max_steps=50, tool_names="", instruction="", observation=""
        )
        assert all(m.content.startswith("Action: ") for m in demo.messages if m.role == "assistant")
        assert demo.messages[3].content.startswith("Observation: ")
    assert stats.episodes == 4 and 0 < stats.supervised_turns < stats.turns  # some turns were perturbed


def test_household_perturbations_include_taking_the_goal_object_where_it_is_not() -> None:
    """The trained agents' commonest error (open a container, take the target without reading what is in
    it) is among the perturbations, so demonstrations show the expert's way back from it."""
    import random

    from reharness.kits.household import HouseholdEnv
    from reharness.training.tiny.demos import perturbation

    env = HouseholdEnv(split="train")
    for task in range(50):  # find an empty-handed agent that just opened a container without the target
        env.reset(seed=0, options={"task": task})
        for _ in range(30):
            opening = env.expert_action().startswith("open ")
            env.step(env.expert_action())
            if opening:
                break
        assert env.world is not None and env.goal is not None
        if opening and env.world.held is None and not env.expert_action().startswith("take "):
            break
    else:
        pytest.fail("no train task among the first 50 opens a container without the goal object")
    here = env.world.location
    assert here is not None
    present = set(env.world.contents(here))
    rng = random.Random(0)
    draws = {perturbation("household", env, rng) for _ in range(60)}
    absent = {
        a for a in draws if a and a.startswith(f"take {env.goal.target} ") and a.endswith(f" from {here}")
    }
    assert absent and not any(a[len("take ") : -len(f" from {here}")] in present for a in absent)


def _assistant_runs(demo: Demo) -> list[tuple[str, int, bool]]:
    """(action, run length, supervised flag of the turn after the run) for each run of perturbed turns."""
    replies = [m.content for m in demo.messages if m.role == "assistant"]
    runs, i = [], 0
    while i < len(replies):
        if demo.supervised[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(replies) and not demo.supervised[j + 1] and replies[j + 1] == replies[i]:
            j += 1
        runs.append((replies[i], j - i + 1, j + 1 < len(replies) and demo.supervised[j + 1]))
        i = j + 1
    return runs


def test_repeated_perturbations_show_the_way_out_of_a_loop() -> None:
    """With ``repeat_prob`` the demos contain the loop trained agents fall into (the same failed command
    again and again) followed by the expert's way out; without it the default data is unchanged."""
    looped, _ = render_demos("household", 40, seed=2, perturb_prob=0.12, repeat_prob=0.6)
    plain, _ = render_demos("household", 40, seed=2, perturb_prob=0.12)
    default, _ = render_demos("household", 40, seed=2, perturb_prob=0.12, repeat_prob=0.0)
    assert [d.messages for d in plain] == [d.messages for d in default]
    long_runs = [run for demo in looped for run in _assistant_runs(demo) if run[1] >= 2]
    plain_runs = [run for demo in plain for run in _assistant_runs(demo) if run[1] >= 2]
    assert len(long_runs) == 25 and len(plain_runs) == 0  # seeded: exact counts
    # a run ends in the expert's supervised way out (or, rarely, in a fresh perturbation): 23 of the 25
    assert sum(after for _, _, after in long_runs) == 23
    assert all(d.success for d in looped)  # the expert still finishes every task


def test_mask_supervises_expert_turns_only_and_trl_keeps_it(tmp_path: Path) -> None:
    from reharness.training.tiny.tokenizer import IM_END, demo_texts, encode_demo, train_tokenizer
    from reharness.training.tiny.train import make_trainer

    demos, _ = render_demos("household", 3, seed=1, perturb_prob=0.4)
    tokenizer = train_tokenizer(demo_texts(demos), 400)
    demo = next(d for d in demos if not all(d.supervised))
    ids, mask = encode_demo(tokenizer, demo)
    replies = [m.content for m in demo.messages if m.role == "assistant"]
    expected = "".join(r + IM_END for r, keep in zip(replies, demo.supervised, strict=True) if keep)
    assert tokenizer.decode([i for i, m in zip(ids, mask, strict=True) if m]) == expected
    perturbed = [r for r, keep in zip(replies, demo.supervised, strict=True) if not keep]
    unsupervised_text = tokenizer.decode([i for i, m in zip(ids, mask, strict=True) if not m])
    assert all(r in unsupervised_text for r in perturbed)

    # TRL turns the assistant_masks column into labels: -100 exactly where the mask is 0
    from datasets import Dataset

    dataset = Dataset.from_dict({"input_ids": [ids], "assistant_masks": [mask]})
    recipe = recipe_for("household", "micro")
    trainer = make_trainer(recipe, dataset, tokenizer, seed=0, output_dir=tmp_path)
    labels = trainer.train_dataset[0]["labels"]
    assert labels == [i if m else -100 for i, m in zip(ids, mask, strict=True)]


@pytest.fixture(scope="module")
def micro_agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch

    from reharness.training.tiny.train import train_agent

    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("micro") / "household-micro"
    # whole words as tokens: 40 steps are enough for "Action: go" but not to spell a verb out of split spaces
    recipe = recipe_for("household", "micro").with_overrides(
        steps=40, batch_size=1, learning_rate=1e-2, split_spaces=False
    )
    result = train_agent(recipe, out, seed=0, dtype="float32")
    assert result.path == out and result.params > 0
    return out


def test_micro_model_loads_with_auto_classes_and_acts(micro_agent: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from reharness.core.types import ChatResponse
    from reharness.runtime.protocols import parse_action

    provenance = json.loads((micro_agent / "provenance.json").read_text())
    assert provenance["seed"] == 0 and provenance["params"] > 0 and provenance["data"]["supervised_turns"] > 0
    assert provenance["command"].startswith("reharness agent train --env household")
    tokenizer = AutoTokenizer.from_pretrained(micro_agent)
    model = AutoModelForCausalLM.from_pretrained(micro_agent)
    demo = render_demos("household", 1, seed=99)[0][0]
    messages = demo.as_dicts()[:2]
    inputs = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    output = model.generate(**inputs, max_new_tokens=16, do_sample=False)
    text = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    action = parse_action("text", ChatResponse(text=text), None).action
    assert text.startswith("Action: ") and action is not None
    assert action.split()[0] in HOUSEHOLD_VERBS


def test_micro_model_runs_episodes_through_the_runtime(micro_agent: Path) -> None:
    from reharness.envs.registry import make_env
    from reharness.training.tiny.evaluate import GreedyAgent, GreedyModel, summarise

    env = make_env("household", split="test")
    harness = Harness(base_harness_config("household").model_copy(update={"step_limit": 4}))
    agent = GreedyAgent(GreedyModel(micro_agent, max_new_tokens=16))
    records = [asyncio.run(EpisodeRunner(env, agent, harness).run(env.get_task(i), seed=i)) for i in range(2)]
    assert all(r.termination in ("step_limit", "success", "terminated") for r in records)
    assert all(r.steps[0].output is not None and r.steps[0].output.completion_token_ids for r in records)
    report = summarise("household", records, 0.0)
    assert report.n == 2 and sum(report.failure_mix.values()) + report.success_rate * 2 == 2


def test_cached_greedy_generation_equals_fresh_generation(micro_agent: Path) -> None:
    from reharness.core.types import ChatRequest
    from reharness.training.tiny.evaluate import CacheState, GreedyModel

    model = GreedyModel(micro_agent, max_new_tokens=12)
    demo = render_demos("household", 1, seed=5)[0][0]
    state = CacheState()
    turns = [k for k, m in enumerate(demo.messages) if m.role == "assistant"][:4]
    for k in turns:  # the history holds the expert's replies, not the model's: exercises cache cropping
        prompt = model.prompt_ids(ChatRequest(messages=demo.messages[:k]))
        assert model.generate(prompt, state) == model.generate(prompt, CacheState())


def test_cli_trains_a_micro_agent_as_json(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from reharness.cli.agent_cmd import agent_app

    result = CliRunner().invoke(
        agent_app,
        ["train", "--env", "db", "--size", "micro", "--steps", "2", "--out", str(tmp_path / "m"), "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(payload) == {"path", "params", "train_seconds"} and Path(payload["path"]).is_dir()


def test_cli_continues_an_agent_with_init_keeping_its_tokenizer(tmp_path: Path) -> None:
    """``--init`` starts from an existing agent: same tokenizer, new weights, the start recorded."""
    import hashlib

    from typer.testing import CliRunner

    from reharness.cli.agent_cmd import agent_app

    base, continued = tmp_path / "base", tmp_path / "continued"
    common = ["train", "--env", "db", "--size", "micro", "--steps", "2", "--json"]
    assert CliRunner().invoke(agent_app, [*common, "--out", str(base)]).exit_code == 0
    result = CliRunner().invoke(
        agent_app,
        [*common, "--out", str(continued), "--init", str(base), "--near-miss", "1", "--observed-notes"],
    )
    assert result.exit_code == 0, result.output
    assert (continued / "tokenizer.json").read_bytes() == (base / "tokenizer.json").read_bytes()
    weights = [hashlib.sha256((d / "model.safetensors").read_bytes()).hexdigest() for d in (base, continued)]
    assert weights[0] != weights[1]
    provenance = json.loads((continued / "provenance.json").read_text())
    assert provenance["init"]["weights_sha256"] == weights[0]
    assert provenance["copy_warmup"] is None
    assert provenance["recipe"]["near_miss"] == 1.0 and provenance["recipe"]["observed_notes"] is True
    missing = CliRunner().invoke(agent_app, [*common, "--out", str(tmp_path / "x"), "--init", str(tmp_path)])
    assert missing.exit_code != 0 and "not a model directory" in missing.output
    other_size = [*common[:4], "S", *common[5:], "--out", str(tmp_path / "y"), "--init", str(base)]
    wrong = CliRunner().invoke(agent_app, other_size)
    assert wrong.exit_code != 0 and "is not the db-S recipe's" in wrong.output
    assert not (tmp_path / "y").exists()


def test_copy_warmup_sequences_repeat_their_span_and_mask_only_predictable_tokens() -> None:
    import random

    from reharness.training.tiny.warmup import copy_sequence

    rng = random.Random(0)
    for _ in range(50):
        ids, mask = copy_sequence(rng, list(range(10, 500)), 128)
        assert len(ids) == len(mask) == 128 and sum(mask) > 0
        first = mask.index(1)
        # every masked token was seen earlier, directly after the same predecessor (an induction target)
        for i in range(first, 128):
            if mask[i]:
                pairs = {(ids[j - 1], ids[j]) for j in range(1, i)}
                assert (ids[i - 1], ids[i]) in pairs


def test_copy_warmup_trains_in_place_and_reports_a_probe() -> None:
    from types import SimpleNamespace

    import torch

    from reharness.models.tiny.config import MICRO
    from reharness.training.tiny.train import build_model
    from reharness.training.tiny.warmup import copy_accuracy, copy_warmup

    torch.manual_seed(0)
    recipe = Recipe(env="household", size="micro", model=MICRO)
    tokenizer = SimpleNamespace(pad_token_id=0, eos_token_id=2)
    model = build_model(recipe, 120, tokenizer, seed=0)
    before = [p.detach().clone() for p in model.parameters()]
    vocabulary = list(range(3, 120))
    report = copy_warmup(
        model,
        vocabulary,
        steps=3,
        learning_rate=1e-3,
        seed=0,
        batch_size=2,
        length=32,
        target_accuracy=1.0,
        probe_every=1,
    )
    # an unreachable target: every step is probed and the phase runs to its step limit
    assert report.steps == 3 and [step for step, _ in report.probes] == [1, 2, 3]
    assert report.copy_accuracy == round(copy_accuracy(model, vocabulary, seed=0), 4)
    assert report.probes[-1][1] == report.copy_accuracy and len(report.loss_curve) == 3
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_demos_longer_than_max_length_are_counted_and_reported() -> None:
    """A demo cut at ``max_length`` loses the supervised turns at its end (the episode's finish): the data
    statistics count the cut demos and their lost supervised tokens, and the progress callback hears it."""
    from reharness.envs.registry import BUILTIN_KITS
    from reharness.training.tiny.train import build_dataset

    recipe = recipe_for(next(iter(BUILTIN_KITS)), "micro").with_overrides(steps=4, batch_size=1)
    _, whole, whole_stats = build_dataset(recipe, seed=0)  # the same demos and tokenizer, uncut
    assert whole_stats["truncated_demos"] == 0
    cut_at = sorted(len(ids) for ids in whole["input_ids"])[len(whole) // 2]  # the longer half is cut
    heard: list[tuple[str, int, int, dict[str, float]]] = []
    _, cut, stats = build_dataset(
        recipe.with_overrides(max_length=cut_at), seed=0, progress=lambda *event: heard.append(event)
    )
    long = [
        mask
        for ids, mask in zip(whole["input_ids"], whole["assistant_masks"], strict=True)
        if len(ids) > cut_at
    ]
    assert 0 < len(long) < len(whole)
    assert stats["truncated_demos"] == len(long) and stats["max_length"] == cut_at
    assert stats["truncated_supervised_tokens"] == sum(sum(mask[cut_at:]) for mask in long) > 0
    assert max(len(row) for row in cut["input_ids"]) == cut_at
    assert [(phase, step, total) for phase, step, total, _ in heard if phase == "truncated"] == [
        ("truncated", len(long), recipe.num_demos)
    ]

"""Greedy evaluation of a tiny agent directory through the real runtime.

:class:`GreedyAgent` is a minimal in-process agent for any HF causal LM directory with a chat template: one
episode at a time, greedy decoding, and a per-episode KV cache that is reused across turns (the base harness
only ever appends to the conversation, so each turn only encodes the new tokens; when the re-rendered
conversation diverges from the cached tokens the cache is cropped to the common prefix). It exists so that the
tiny agents can be measured while training recipes are tuned; the general ``hf:PATH`` backend of
:mod:`reharness.models` serves them for everything else.

:func:`evaluate` runs a batch with :func:`reharness.runtime.run_batch` (same task choice and seeds as
``reharness run --split test --n N --seed S``) and summarises success and the failure mix.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reharness.core.agent import Agent
from reharness.core.env_protocol import TextEnvLike
from reharness.core.types import ChatRequest, ChatResponse
from reharness.runtime.executor import RunSpec, run_batch
from reharness.runtime.harness import Harness
from reharness.store.records import EpisodeRecord


class GreedyModel:
    """A loaded model + tokenizer with a greedy, cache-reusing ``generate``."""

    def __init__(self, path: str | Path, max_new_tokens: int = 64) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.path = Path(path)
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.model = AutoModelForCausalLM.from_pretrained(self.path, dtype=torch.float32).eval()
        self.max_new_tokens = max_new_tokens
        self.eos_id = int(self.tokenizer.eos_token_id)

    def prompt_ids(self, request: ChatRequest) -> list[int]:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        ids: list[int] = self.tokenizer(str(text), add_special_tokens=False)["input_ids"]
        return ids

    def generate(self, prompt: list[int], state: CacheState) -> tuple[list[int], str]:
        """Greedy completion of ``prompt``; ``state`` carries the episode's KV cache between turns."""
        import torch
        from transformers import DynamicCache

        with torch.inference_mode():
            common = 0
            for a, b in zip(state.ids, prompt, strict=False):
                if a != b:
                    break
                common += 1
            common = min(common, len(prompt) - 1)  # feed at least one token to get logits
            if state.cache is None:
                state.cache, common = DynamicCache(config=self.model.config), 0
            elif common < len(state.ids):
                state.cache.crop(-(len(state.ids) - common))
            feed = prompt[common:]
            generated: list[int] = []
            for _ in range(self.max_new_tokens):
                out = self.model(input_ids=torch.tensor([feed]), cache=state.cache, use_cache=True)
                token = int(out.logits[0, -1].argmax())
                generated.append(token)
                if token == self.eos_id:
                    break
                feed = [token]
            state.ids = (prompt + generated)[: state.cache.get_seq_length()]
        text = self.tokenizer.decode([t for t in generated if t != self.eos_id], skip_special_tokens=True)
        return generated, str(text)


@dataclass
class CacheState:
    """The tokens held in an episode's KV cache and the cache itself."""

    ids: list[int] = field(default_factory=list)
    cache: Any = None


class GreedyAgent(Agent):
    """Greedy tiny-model agent (one KV cache per episode)."""

    def __init__(self, model: GreedyModel, state: CacheState | None = None, policy_id: str = "") -> None:
        self.model = model
        self.state = state
        self.policy_id = policy_id or f"tiny-greedy:{model.path.name}"

    def start_episode(self, env: TextEnvLike, protocol: str) -> Agent:
        return GreedyAgent(self.model, CacheState(), self.policy_id)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        prompt = self.model.prompt_ids(request)
        generated, text = self.model.generate(prompt, self.state or CacheState())
        return ChatResponse(text=text, prompt_token_ids=tuple(prompt), completion_token_ids=tuple(generated))


def failure_kind(episode: EpisodeRecord) -> str:
    """Coarse failure kind of one episode (``success`` when it succeeded)."""
    if episode.success:
        return "success"
    if episode.termination == "error":
        return "error"
    flags = Counter(flag for step in episode.steps for flag in step.flags)
    if episode.termination == "terminated":
        return "wrong_answer"
    n = max(1, len(episode.steps))
    if flags["format_error"] >= n / 2:
        return "format_error"
    if flags["invalid_action"] >= n / 2:
        return "invalid_action"
    if flags["repeated_action"] >= n / 3:
        return "repeated_action"
    return "step_limit"


@dataclass
class EvalReport:
    """Success rate, failure mix and per-step signals of an evaluation batch."""

    env: str
    n: int
    success_rate: float
    failure_mix: dict[str, int]
    step_flags: dict[str, float]
    mean_steps: float
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def summarise(env: str, episodes: list[EpisodeRecord], seconds: float) -> EvalReport:
    kinds = Counter(failure_kind(e) for e in episodes)
    steps = [s for e in episodes for s in e.steps]
    flags = Counter(flag for s in steps for flag in s.flags)
    return EvalReport(
        env=env,
        n=len(episodes),
        success_rate=kinds["success"] / max(1, len(episodes)),
        failure_mix={k: v for k, v in sorted(kinds.items()) if k != "success"},
        step_flags={k: round(v / max(1, len(steps)), 3) for k, v in sorted(flags.items())},
        mean_steps=sum(e.num_steps for e in episodes) / max(1, len(episodes)),
        seconds=seconds,
    )


def evaluate(
    path: str | Path,
    env: str,
    n: int = 100,
    seed: int = 0,
    split: str = "test",
    max_new_tokens: int = 64,
    out_dir: str | Path | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> EvalReport:
    """Greedy success of the model at ``path`` on ``n`` tasks of ``split`` in the env's base harness
    (``on_episode`` is called as each episode finishes: the CLI's progress bar)."""
    import time

    agent = GreedyAgent(GreedyModel(path, max_new_tokens))
    spec = RunSpec(env=env, agent=f"tiny-eval:{Path(path).name}", split=split, n=n, seed=seed, concurrency=1)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(
            run_batch(
                spec, agent, Harness.base(env), out_dir=out_dir or tmp, overwrite=True, on_episode=on_episode
            )
        )
    return summarise(env, result.episodes, time.perf_counter() - started)

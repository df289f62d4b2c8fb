"""The held-out evaluation of ``reharness experiment r1`` (stage 2, see :mod:`.r1`): the :class:`Evaluator`
(test batches × methods, one record per (env, batch, method) in ``eval.jsonl``, resumable), the engineers of
the methods (:func:`make_method`) and the resumable JSON-lines records the studies share.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reharness.core.aio import bounded
from reharness.core.hashing import derive_seed
from reharness.core.jsonl import read_jsonl
from reharness.experiments.r1_stages import EVAL_FILE, LEARNED, PROMPTED, R1Config, main_methods

if TYPE_CHECKING:
    from reharness.engineer.base import Engineer, Proposal
    from reharness.failures.packets import FailurePacket
    from reharness.measure.baseline import Baseline
    from reharness.runtime.agents import Agent

T = TypeVar("T")


def make_method(
    name: str,
    train_dir: Path,
    temperature: float = 0.7,
    resample_invalid: int | None = None,
    constrain: bool = True,
    config: R1Config | None = None,
) -> Engineer | None:
    """The engineer of a method (``None`` for ``none``); learned engineers sample at ``temperature`` and
    resample invalid replies (:class:`~reharness.engineer.llm.LLMEngineer`); ``prompted`` is the model
    ``config.editor`` prompted to edit the harness (:func:`prompted_editor`)."""
    from reharness.engineer.factory import make_engineer

    if name == "none":
        return None
    if name == PROMPTED:
        if config is None or config.editor is None:
            raise ValueError("the prompted row needs R1Config.editor")
        return prompted_editor(config, temperature)
    if name in ("placebo", "placebo-text"):
        from reharness.experiments.r1_controls import PlaceboEngineer

        return PlaceboEngineer(text=name == "placebo-text")
    if name in LEARNED:
        return make_engineer(
            f"hf:{train_dir / name}",
            temperature=temperature,
            resample_invalid=resample_invalid,
            constrain=constrain,
        )
    return make_engineer(name)


def prompted_editor(config: R1Config, temperature: float) -> Engineer:
    """Harness-R1's prompted editor: ``config.editor`` asked once per packet, at ``temperature``, with
    Harness-R1's full prompt (hook code) or the compact one (repair programs). It is never resampled: the
    row measures what the model writes, parse and validation failures included (scored as no patch)."""
    from reharness.engineer.factory import make_engineer
    from reharness.engineer.llm import ModelEngineerOptions

    options = ModelEngineerOptions(**editor_options(config))
    return make_engineer(
        f"llm:{config.editor}", temperature=temperature, resample_invalid=0, **options.engineer_kwargs()
    )


def editor_options(config: R1Config) -> dict[str, Any]:
    """How the prompted editor is asked (recorded with each of its rows)."""
    return {
        "prompt": config.editor_prompt or ("compact" if config.editor_language == "program" else "full"),
        "language": config.editor_language,
        "constrain": config.editor_constrain,
        "max_tokens": config.editor_max_tokens,
    }


def check_editor_records(config: R1Config, done: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse to mix prompted-editor rows of another editor, or of the same editor asked another way (the
    row is keyed by method, not by model or options; rows written before the options were recorded are
    checked by model only)."""
    from reharness.core.errors import ConfigError

    if config.editor is None:
        return
    mine = [r for r in done.values() if r.get("method") == PROMPTED]
    other = {r.get("editor") for r in mine} - {config.editor}
    if other:
        raise ConfigError(
            f"{config.out} holds prompted-editor rows of {sorted(map(str, other))}, not {config.editor!r}",
            hint="give the same --editor, or another --out for another editor",
        )
    asked = editor_options(config)
    for before in (r["editor_options"] for r in mine if "editor_options" in r):
        if before != asked:
            raise ConfigError(
                f"{config.out} holds prompted-editor rows asked with {json.dumps(before, sort_keys=True)}, "
                f"not {json.dumps(asked, sort_keys=True)}",
                hint="give the same --editor-… options, or another --out",
            )


class Evaluator:
    """Stage 2: held-out batches × methods, one record per (env, batch, method) in ``eval.jsonl``."""

    def __init__(
        self,
        config: R1Config,
        agents: Mapping[str, Agent] | None,
        notify: Callable[[str], None],
        *,
        agent_spec: str | None = None,
        out: Path | None = None,
        progress: Callable[[str, int, int, dict[str, float]], None] | None = None,
        methods: tuple[str, ...] | None = None,
    ) -> None:
        self.config, self.notify, self.progress = config, notify, progress
        self.methods = methods or main_methods(config)
        self.best_of_n: dict[str, int] | None = None
        self.agent_spec = agent_spec or config.agent
        self.out = out or Path(config.out)
        self.train_dir = Path(config.out) / "train"
        self.agents: dict[str, Agent] = dict(agents or {})
        self._own_agents = agents is None
        self.engineers: dict[str, Engineer | None] = {}

    def agent(self, env: str) -> Agent:
        if env not in self.agents:
            from reharness.runtime.agent_specs import make_agent

            self.agents[env] = make_agent(self.agent_spec.replace("{env}", env))
        return self.agents[env]

    async def run(self) -> list[dict[str, Any]]:
        path = self.out / EVAL_FILE
        done = load_records(path)
        check_editor_records(self.config, done)
        n = self.config.test_batches
        todo = [
            (env, index)
            for env in self.config.envs
            for index in range(n)
            if not all(f"{env}/{index}/{m}" in done for m in self.methods)
        ]

        finished = [0]

        async def one(batch: tuple[str, int]) -> list[dict[str, Any]]:
            self.notify(f"evaluate: {batch[0]} test batch {batch[1] + 1}/{n}")
            records = await self.batch(*batch, done)
            finished[0] += 1
            if self.progress is not None:  # the CLI's bar over the test batches left, with an eta
                self.progress("evaluate (test batches)", finished[0], len(todo), {})
            return records

        try:
            await record_units(todo, self.config.batch_concurrency, one, done, path)
        finally:
            await self.close()
        return list(done.values())

    async def close(self) -> None:
        """Close the engineers, and the agents this evaluator built."""
        for engineer in self.engineers.values():
            if engineer is not None:
                await engineer.close()
        self.engineers.clear()
        if self._own_agents:
            for agent in self.agents.values():
                await agent.close()
            self.agents.clear()

    async def baseline(
        self, env: str, split_tag: str, index: int, n: int | None = None, max_traces: int = 20
    ) -> tuple[Baseline, FailurePacket]:
        """The target's (cached) baseline of a test-split batch and its failure packet.

        ``split_tag`` names the batch family (``test`` for the main table) so studies draw other batches."""
        from reharness.failures.packets import extract_packet
        from reharness.measure.baseline import Target, get_baseline
        from reharness.runtime import RunSpec, base_harness_config
        from reharness.store.run_store import RunStore
        from reharness.training.data import batch_seed

        c = self.config
        harness = base_harness_config(env)
        if c.max_steps is not None:
            harness = harness.model_copy(update={"step_limit": c.max_steps})
        spec = RunSpec(
            env=env, agent=self.agent_spec.replace("{env}", env), split="test", n=n or c.batch_size,
            seed=batch_seed(c.evaluation_seed, env, split_tag, index), concurrency=c.concurrency,
        )  # fmt: skip
        base = await get_baseline(spec, self.agent(env), Target(harness), self.out / "runs")
        meta = RunStore(base.result.out).read_meta()
        return base, extract_packet(base.episodes, run_meta=meta, max_traces=max_traces)

    async def propose(self, method: str, packet: FailurePacket, seed: int) -> Proposal:
        """One proposal of ``method`` (engineers are built once and closed by :meth:`run`)."""
        if method not in self.engineers:
            self.engineers[method] = make_method(
                method,
                self.train_dir,
                self.config.temperature,
                self.config.resample_invalid,
                self.config.constrain,
                self.config,
            )
        engineer = self.engineers[method]
        assert engineer is not None
        return (await engineer.propose(packet, 1, seed=derive_seed(seed, method) % 2**31))[0]

    async def batch(self, env: str, index: int, done: dict[str, Any]) -> list[dict[str, Any]]:
        from reharness.experiments.r1_controls import best_of_n, best_of_n_budget
        from reharness.measure.paired import Candidate, evaluate_candidates, evaluate_patch

        base, packet = await self.baseline(env, "test", index)
        seed = base.spec.seed
        methods = [m for m in self.methods if f"{env}/{index}/{m}" not in done]
        # every method's patch at once: their reruns share the target's model calls
        patching = [m for m in methods if m != "none" and packet.header.failures_found]
        searched: dict[str, Any] = {}
        if "best-of-n" in patching:
            self.best_of_n = self.best_of_n or best_of_n_budget(self.config)
            searched["best-of-n"] = best_of_n(
                self.config, self.agent(env), env, index, packet, seed, self.best_of_n["n"]
            )
        written = await asyncio.gather(
            *(searched[m] if m in searched else self.propose(m, packet, seed) for m in patching)
        )
        search_meta = {m: w[1] for m, w in zip(patching, written, strict=True) if m in searched}
        proposals = {m: w[0] if m in searched else w for m, w in zip(patching, written, strict=True)}
        evidence = packet.leakage_evidence()
        placebo = proposals.pop("placebo", None)
        measured, placebo_measured = await asyncio.gather(
            evaluate_candidates(
                [Candidate.of(m, p) for m, p in proposals.items()],
                base,
                self.agent(env),
                self.out / "runs",
                evidence=evidence,
            ),
            _placebo(placebo, base, self.agent(env), self.out / "runs", evidence, evaluate_patch),
        )
        results = {r.candidate_id: r for r in [*measured, *placebo_measured]}
        if placebo is not None:
            proposals["placebo"] = placebo
        records = []
        for method in methods:
            key = f"{env}/{index}/{method}"
            record: dict[str, Any] = {"key": key, "env": env, "batch": index, "method": method, "seed": seed}
            record |= {"status": "none", "valid": False, "rescued": [], "broken": [], "patch_id": None}
            if method in results:
                proposal, result = proposals[method], results[method]
                record |= {
                    "status": result.status,
                    "valid": result.valid,
                    "reason": (result.reason or "")[:300] or None,
                    "rescued": result.rescued,
                    "broken": result.broken,
                    "patch_id": proposal.patch.identity if proposal.patch else None,
                    "attempts": proposal.meta.get("attempts", 1),
                    "error_code": proposal.error_code,
                    "rejected_at": proposal.meta.get("rejected_at"),
                    # what a refused reply said (the start and the end), so its failure can be read later
                    "raw_reply": _ends(proposal.raw_reply) if proposal.error_code else None,
                    "patch": proposal.patch.to_dict() if proposal.patch and result.valid else None,
                }
            if method == PROMPTED:
                record["editor"] = self.config.editor
                record["editor_options"] = editor_options(self.config)
            if method in search_meta:
                record["search"] = search_meta[method]
            record["successes"] = patched_successes(base, record["rescued"], record["broken"])
            records.append(record)
        return records


async def _placebo(
    placebo: Proposal | None, base: Baseline, agent: Agent, runs: Path, evidence: Any, evaluate: Any
) -> list[Any]:
    """The placebo patch's paired result: every step rerun (no prefix reuse), scored by its rerun (not by the
    degenerate rule, under which a patch without effects scores as no patch by definition)."""
    if placebo is None:
        return []
    result = await evaluate(
        placebo.patch, base, agent, runs, candidate_id="placebo", evidence=evidence, prefix_reuse=False,
        score_degenerate=True,
    )  # fmt: skip
    return [result]


def _ends(text: str, keep: int = 600) -> str:
    """``text``, or its first and last ``keep`` characters when it is longer."""
    return text if len(text) <= 2 * keep else f"{text[:keep]}\n[…]\n{text[-keep:]}"


def patched_successes(base: Baseline, rescued: Iterable[str], broken: Iterable[str]) -> list[float]:
    """Success per task of ``base`` (its order) under a patch that rescued and broke the tasks named."""
    flips = {t: 1.0 for t in rescued} | {t: 0.0 for t in broken}
    return [flips.get(e.task_id, float(e.success)) for e in base.episodes]


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one finished record to a resumable JSON-lines file (see :func:`load_records`)."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


async def record_units(
    units: list[T],
    limit: int,
    work: Callable[[T], Awaitable[list[dict[str, Any]]]],
    done: dict[str, dict[str, Any]],
    path: Path,
) -> None:
    """Run ``work`` on each unit (``limit`` at once) and record every record it returns as soon as the unit
    finishes: into ``done`` by key and appended to ``path``, so an interrupted stage resumes."""
    async for _, records in bounded(units, limit, work):
        for record in records:
            done[record["key"]] = record
            append_record(path, record)


def load_records(path: Path) -> dict[str, dict[str, Any]]:
    """The finished records of a resumable JSONL file, by ``key``; a torn last line (an interrupted write)
    ends the read and is dropped from the file, which is rewritten with the records kept."""
    done: dict[str, dict[str, Any]] = {r["key"]: r for r in read_jsonl(path)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in done.values()), "utf-8")
    return done

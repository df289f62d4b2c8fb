"""The Harness-R1 loop at inference time: ``reharness improve``.

One round: run the frozen target on a batch of ``train`` tasks (cached baseline,
:mod:`reharness.measure.baseline`) → failure packet (:func:`reharness.failures.extract_packet`) → ``k``
proposals from the engineer → static validation → paired rerun of every candidate on the same tasks and seeds,
concurrently (:mod:`reharness.measure.paired`) → accept the best candidate whose Δ_B > 0 and whose broken-task
count ≤ ``max_regressions`` (ties: fewer broken, more rescued, lower index). After the last round the accepted
harness is compared with the unpatched one on the held-out split (``eval_split``, ``eval_n`` tasks, paired,
with bootstrap intervals).

**Rounds.** Round 1 uses batch seed ``seed``; round ``r > 1`` draws a new batch of train tasks (seed derived
from ``seed`` and ``r``) and starts from the previous accepted harness: its baseline already runs the accepted
patches, and a newly accepted patch is stacked after them as one more overlay (hooks of stacked overlays
combine as :mod:`reharness.runtime.overlay` documents). A round that accepts nothing leaves the harness as it
was. Harness-R1 itself uses one fresh overlay per packet (R = 1).

**Outputs** (``--out DIR``): ``patch.json`` (the accepted patch; with several accepted rounds the last one,
and ``result.json["stack"]`` lists all of them in order — apply them with repeated ``reharness run --patch``),
``patches/round-R.json``, ``candidates.json`` / ``candidates.csv``, ``report.md``, ``result.json``,
``round-R/packet.json`` and ``round-R/proposals.jsonl`` (raw replies kept for training), ``runs/`` (every
baseline and patched run; rerunning the same command loads them) and ``timings.json`` (wall-clock seconds,
the only non-deterministic file). Every file is written through :func:`reharness.core.secrets.redact`.

**Restarts.** An interrupted ``improve`` resumes every run where it stopped; costs are recounted from the
stored episodes (:func:`reharness.measure.baseline.stored_cost`), so the files report the same costs as an
uninterrupted invocation. Episodes that ended in an infrastructure error (model server or env failed) are
counted in ``policy_errors`` / ``env_errors`` and kept on resume unless ``retry_errors`` is set; a baseline
in which no model request got a valid reply stops the loop (``NoValidReplyError``, exit status 3).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.core.errors import ConfigError, ReharnessError
from reharness.core.hashing import derive_seed
from reharness.core.secrets import redact
from reharness.engineer.improve_result import CandidateRow, ImproveConfig, ImproveResult, RoundSummary
from reharness.envs.registry import get_kit, resolve_env_name
from reharness.measure.baseline import Baseline, Target, get_baseline
from reharness.measure.paired import Candidate, PairedResult, evaluate_candidates, evaluate_patch
from reharness.patches.model import Patch
from reharness.runtime.agent_specs import make_agent
from reharness.runtime.agents import Agent
from reharness.runtime.env_reuse import IDLE_ENVS
from reharness.runtime.executor import RunSpec
from reharness.runtime.harness import Harness, HarnessConfig, start_harness_config
from reharness.runtime.resolved import env_kwargs
from reharness.store.records import EpisodeRecord

if TYPE_CHECKING:
    from reharness.engineer.base import Engineer, Proposal


class Events:
    """Progress callbacks (the CLI draws them on stderr); the defaults do nothing."""

    def stage(self, text: str) -> None:
        """A step of the loop starts."""

    def batch(self, label: str, total: int) -> Callable[[EpisodeRecord], None]:
        """A batch of ``total`` episodes starts; the returned callback is called per finished episode."""
        return lambda record: None

    def batch_done(self, label: str) -> None:
        """A batch finished (or was loaded from the cache)."""


def select_best(results: list[PairedResult], max_regressions: int) -> PairedResult | None:
    """The accepted candidate: Δ_B > 0 and ≤ ``max_regressions`` broken tasks, best Δ_B (ties: fewer broken,
    more rescued, earlier candidate)."""
    eligible = [
        (i, r) for i, r in enumerate(results) if r.valid and r.delta > 0 and len(r.broken) <= max_regressions
    ]
    if not eligible:
        return None
    return min(eligible, key=lambda x: (-x[1].delta, len(x[1].broken), -len(x[1].rescued), x[0]))[1]


def round_seed(seed: int, round_index: int) -> int:
    return seed if round_index == 1 else derive_seed(seed, "improve-round", round_index) % 2**31


def _row(round_index: int, proposal: Proposal, result: PairedResult, accepted: bool) -> CandidateRow:
    patch = proposal.patch
    return CandidateRow(
        round=round_index,
        id=result.candidate_id,
        valid=result.valid,
        status=result.status,
        reason=result.reason,
        patch_id=patch.identity if patch is not None else None,
        description=patch.description if patch is not None else "",
        delta=result.delta,
        success_delta=result.success_delta,
        rescued=len(result.rescued),
        broken=len(result.broken),
        rescued_ids=result.rescued,
        broken_ids=result.broken,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        effect_steps=result.effect_steps,
        hook_errors=result.hook_errors,
        model_calls=result.cost.model_calls,
        reused_calls=result.cost.reused_calls,
        policy_errors=result.policy_errors,
        env_errors=result.env_errors,
        accepted=accepted,
    )


def _write_json(path: Path, data: Any) -> None:
    _write_text(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(redact(text), encoding="utf-8")


class _Loop:
    """State of one ``improve`` invocation (kept small: see :func:`improve`)."""

    agent: Agent
    engineer: Engineer

    def __init__(self, config: ImproveConfig, events: Events) -> None:
        self.config, self.events = config, events
        self.env = resolve_env_name(config.env).name
        base = start_harness_config(config.harness, self.env)
        if config.max_steps is not None:
            base = base.model_copy(update={"step_limit": config.max_steps})
        self.base: HarnessConfig = base
        self.out = Path(config.out)
        self.runs = self.out / "runs"
        self.result = ImproveResult(config=config)
        self.timings: dict[str, float] = {}

    def spec(self, split: str, n: int, seed: int) -> RunSpec:
        c = self.config
        return RunSpec(
            env=self.env,
            agent=c.agent,
            split=split,
            n=n,
            seed=seed,
            concurrency=c.concurrency,
            agent_options=c.agent_options,
        )

    def check_arguments(self) -> None:
        """Fail fast (before any episode) on splits or sizes the environment cannot serve."""
        c = self.config
        checks = ((c.batch_split, c.batch_size, "--batch-size"), (c.eval_split, c.eval_n, "--eval-n"))
        for split, n, flag in checks:
            where = f"--eval-split {split}" if flag == "--eval-n" else f"--batch-split {split}"
            kit, kwargs = get_kit(self.env), env_kwargs(self.spec(split, n, c.seed), Harness(self.base))
            try:
                env = IDLE_ENVS.take(kit, kwargs)  # kept for the first batch when the kit reuses environments
            except ReharnessError as exc:
                raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
            total = env.num_tasks()
            IDLE_ENVS.give(kit, kwargs, env)
            if n > total:
                raise ConfigError(
                    f"{flag} {n} exceeds the {total} tasks of {where}", hint=f"pass {flag} {total} or fewer"
                )

    async def baseline(self, spec: RunSpec, target: Target, label: str) -> Baseline:
        callback = self.events.batch(label, spec.n or 0)
        found = await get_baseline(
            spec, self.agent, target, self.runs, on_episode=callback, retry_errors=self.config.retry_errors
        )
        self.events.batch_done(label)
        found.require_replies(label)  # a dead model server stops the loop before the engineer sees it
        self.timings[label] = round(found.cost.seconds, 3)
        return found

    async def round(self, r: int, target: Target) -> Target:
        from reharness.failures.packets import extract_packet
        from reharness.store.run_store import RunStore

        c = self.config
        seed = round_seed(c.seed, r)
        self.events.stage(f"round {r}: baseline on {c.batch_size} {c.batch_split} tasks")
        base = await self.baseline(self.spec(c.batch_split, c.batch_size, seed), target, f"r{r} baseline")
        packet = extract_packet(base.episodes, run_meta=RunStore(base.result.out).read_meta())
        round_dir = self.out / f"round-{r}"
        round_dir.mkdir(parents=True, exist_ok=True)
        _write_text(round_dir / "packet.json", packet.to_json() + "\n")
        infra = base.result.infrastructure_errors()
        summary = RoundSummary(
            round=r,
            batch_seed=seed,
            batch_size=len(base.episodes),
            baseline_success=round(base.result.success_rate, 6),
            baseline_score=round(base.result.mean_score, 6),
            failures=packet.header.failures_found,
            proposals=0,
            valid_proposals=0,
            baseline_model_calls=base.cost.model_calls,
            policy_errors=infra["policy"],
            env_errors=infra["env"],
        )
        self.result.rounds.append(summary)
        if packet.header.failures_found == 0:
            self.events.stage(f"round {r}: no failures in the batch; nothing to repair")
            return target
        self.events.stage(f"round {r}: {c.k} proposals from {c.engineer}")
        proposals = await self.engineer.propose(packet, c.k, seed=derive_seed(c.seed, "engineer", r) % 2**31)
        lines = [json.dumps(p.to_dict(), sort_keys=True, ensure_ascii=False) for p in proposals]
        _write_text(round_dir / "proposals.jsonl", "".join(line + "\n" for line in lines))
        summary.proposals, summary.valid_proposals = len(proposals), sum(p.valid for p in proposals)
        candidates = [Candidate.of(f"r{r}-c{i}", p) for i, p in enumerate(proposals)]
        self.events.stage(f"round {r}: paired reruns of {len(candidates)} candidates")
        bars = {cand.id: self.events.batch(cand.id, len(base.episodes)) for cand in candidates if cand.patch}
        results = await evaluate_candidates(
            candidates,
            base,
            self.agent,
            self.runs,
            timeout_s=c.candidate_timeout_s,
            evidence=packet.leakage_evidence(),
            prefix_reuse=c.prefix_reuse,
            on_episode=lambda cid, record: bars[cid](record),
            retry_errors=c.retry_errors,
        )
        for cid in bars:
            self.events.batch_done(cid)
        best = select_best(results, c.max_regressions)
        for proposal, res in zip(proposals, results, strict=True):
            self.result.candidates.append(_row(r, proposal, res, res is best))
            self.timings[res.candidate_id] = round(res.cost.seconds, 3)
        if best is None:
            self.events.stage(f"round {r}: no candidate improved the batch within the regression limit")
            return target
        accepted = next(p.patch for p, res in zip(proposals, results, strict=True) if res is best)
        assert accepted is not None
        summary.accepted = best.candidate_id
        path = self.out / "patches" / f"round-{r}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        accepted.with_metadata(improve={"round": r, "candidate": best.candidate_id}).dump(path)
        self.result.stack.append(str(path))
        self.events.stage(f"round {r}: accepted {best.candidate_id} (Δ_B {best.delta:+.3f})")
        return target.with_patch(accepted)

    async def heldout(self, patches: tuple[Patch, ...]) -> PairedResult:
        c = self.config
        self.events.stage(f"held-out: {c.eval_n} {c.eval_split} tasks, unpatched vs accepted")
        base = await self.baseline(
            self.spec(c.eval_split, c.eval_n, c.seed), Target(self.base), "heldout base"
        )
        callback = self.events.batch("heldout patched", len(base.episodes))
        result = await evaluate_patch(
            list(patches),
            base,
            self.agent,
            self.runs,
            candidate_id="heldout",
            prefix_reuse=c.prefix_reuse,
            ci_seed=c.seed,
            on_episode=callback,
            retry_errors=c.retry_errors,
        )
        self.events.batch_done("heldout patched")
        self.timings["heldout patched"] = round(result.cost.seconds, 3)
        return result

    def write(self) -> None:
        from reharness.engineer.report import candidates_csv, render_report

        res, out = self.result, self.out
        if res.stack:
            final = Path(res.stack[-1])
            _write_text(out / "patch.json", final.read_text(encoding="utf-8"))
            res.patch_path = str(out / "patch.json")
        else:  # a patch.json left by an earlier invocation in the same --out must not look accepted
            (out / "patch.json").unlink(missing_ok=True)
        rows = [row.model_dump(mode="json") for row in res.candidates]
        _write_json(out / "candidates.json", rows)
        _write_text(out / "candidates.csv", candidates_csv(res.candidates))
        _write_json(out / "result.json", res.model_dump(mode="json", exclude=_SECONDS))
        _write_text(out / "report.md", render_report(res))
        _write_json(out / "timings.json", self.timings)


_SECONDS: Any = {"heldout": {"cost": {"seconds"}}}


async def improve(
    config: ImproveConfig,
    *,
    agent: Agent | None = None,
    engineer: Engineer | None = None,
    events: Events | None = None,
    notify: Callable[[str], None] | None = None,
) -> ImproveResult:
    """Run ``config.rounds`` rounds of propose → paired rerun → accept, then the held-out comparison.

    ``agent`` / ``engineer`` override the specs in ``config`` (the caller then owns and closes them).
    """
    from reharness.engineer.factory import make_engineer

    loop = _Loop(config, events or Events())
    loop.check_arguments()  # bad splits and sizes fail before any model or engineer is loaded
    own_agent, own_engineer = agent is None, engineer is None
    loop.engineer = (
        engineer
        if engineer is not None
        else make_engineer(config.engineer, **config.engineer_options.engineer_kwargs())
    )
    try:
        loop.agent = (
            agent if agent is not None else make_agent(config.agent, notify=notify, **config.agent_options)
        )
    except BaseException:
        if own_engineer:
            await loop.engineer.close()
        raise
    try:
        target = Target(loop.base)
        for r in range(1, config.rounds + 1):
            target = await loop.round(r, target)
        if target.patches:
            loop.result.heldout = await loop.heldout(target.patches)
        loop.write()
        return loop.result
    finally:
        if own_agent:
            await loop.agent.close()
        if own_engineer:
            await loop.engineer.close()

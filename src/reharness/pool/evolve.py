"""Directional evolution of a sibling pool (``reharness pool evolve``), Harness-S §1.

1. The target policy runs under H0 on a ``train`` batch; its failures are grouped into the directions'
   clusters (a failure falls in every direction whose codes it carries).
2. Per direction and generation: a failure packet restricted to the cluster, whose instructions name the
   direction, its failure codes and what the current sibling already changes; ``k`` patch proposals from the
   engineer constrained to the direction (``operators``: only the direction's operators; model engineers: the
   packet's instructions), plus the direction's config mutations (:mod:`.mutations`); each candidate is the
   parent sibling plus one change. Every candidate is measured by a paired rerun of the whole train batch
   (same tasks and seeds as H0; prefix reuse makes the shared prefix free). Fitness = cluster failures
   rescued − λ × tasks broken; a candidate breaking more than ``max_regressions`` tasks is ineligible. The
   best candidate that beats its parent becomes the parent of the next generation and a finalist; up to
   ``finalists - 1`` more eligible candidates become finalists when each rescues a train task no finalist
   before it rescues (:func:`pick_finalists`).
3. Complementary selection on ``valid``: H0 and every finalist run the same valid tasks; greedily admit the
   finalist that rescues the most H0 failures no admitted sibling rescues (ties: fewer broken, then
   evolution order) while it adds at least ``min_new``; stop at ``size``.
4. The frozen pool (:mod:`.pool`), its validation profile (:mod:`.profile`, when available), ``report.md``
   with the coverage table (failure clusters × siblings) and a heat-map PNG.

Every run lands in ``OUT/evolve/runs`` under a content-addressed id (spec + harness), candidates and
proposals are deterministic for a seed, so an interrupted evolve rerun with the same options loads what
finished and runs only the rest — and reaches the same pool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reharness.core.errors import options_error
from reharness.core.hashing import derive_seed
from reharness.engineer.improve import Events
from reharness.measure.baseline import Baseline, Target, get_baseline
from reharness.measure.paired import compare
from reharness.pool.complementary import complementary
from reharness.pool.directions import Direction, load_directions, select_directions
from reharness.pool.lineage import EvolveResult, Lineage, ValidMeasure
from reharness.pool.measure import run_paired
from reharness.pool.mutations import config_mutations
from reharness.pool.pool import Pool
from reharness.pool.sibling import Provenance, Sibling
from reharness.runtime.agents import Agent
from reharness.runtime.executor import RunSpec
from reharness.runtime.harness import HarnessConfig, start_harness_config
from reharness.store.records import EpisodeRecord


class EvolveConfig(BaseModel):
    """Options of ``reharness pool evolve`` (validated; written to ``OUT/evolve/config.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str
    agent: str
    engineer: str = "operators"
    directions: str | None = Field(None, description="Direction names (comma-separated) or a YAML file.")
    holdout_direction: str | None = Field(None, description="A direction left out of the evolution.")
    size: int = Field(6, gt=0, le=64, description="Most siblings admitted to the pool.")
    generations: int = Field(2, gt=0, le=20)
    k: int = Field(4, gt=0, le=64, description="Engineer proposals per direction and generation.")
    batch_size: int = Field(30, gt=0, description="Train tasks the candidates are measured on.")
    valid_n: int = Field(50, gt=0, description="Valid tasks of the complementary selection.")
    max_regressions: int = Field(2, ge=0, description="Most broken train tasks of an eligible candidate.")
    lam: float = Field(1.0, ge=0, description="λ: the price of one broken task in the fitness.")
    min_new: int = Field(1, ge=1, description="m: new valid rescues a sibling must add to be admitted.")
    finalists: int = Field(
        2,
        ge=1,
        le=16,
        description="Most finalists per direction and generation: the best eligible candidate, then eligible "
        "ones rescuing a train task no finalist before them rescues.",
    )
    seed: int = 0
    out: str = "pool"
    harness: str | None = Field(
        None, description="Harness YAML H0 is read from (fields override the env's base harness)."
    )
    concurrency: int = Field(16, gt=0, le=256)
    prefix_reuse: bool = True
    config_mutations: bool = Field(
        True, description="Also propose harness-config mutations along each direction (not only patches)."
    )

    @classmethod
    def build(cls, **values: Any) -> EvolveConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            raise options_error(exc, "reharness pool evolve") from None


def direction_packet_notes(direction: Direction, parent: Lineage, h0: HarnessConfig) -> list[str]:
    """Instructions added to a cluster packet: the direction, its codes and what the parent changes."""
    notes = [
        f"Repair direction '{direction.name}': {direction.description}",
        f"This packet holds only failures of the direction's cluster ({', '.join(direction.codes)}); "
        "repair them without breaking tasks the agent already solves.",
    ]
    if parent.origin != "H0":
        sibling = Sibling(
            name="parent", direction=direction.name, base=h0, delta=parent.delta, patches=parent.patches
        )
        notes.append(
            "The current sibling already changes: " + "; ".join(sibling.changes()) + ". Improve on it."
        )
    return notes


def direction_operators(direction: Direction, env: str) -> list[Any]:
    """The operators of ``direction`` that apply to ``env``: the direction's shipped ones, then those of the
    env's kit that name the direction."""
    from reharness.engineer.operators.registry import get_operator, kit_operators

    own = [op for op in kit_operators(env) if op.direction == direction.name]
    ops = [get_operator(n) for n in direction.operators] + own
    return [op for op in ops if op.applies_to(env)]


def batch_spec(config: EvolveConfig, split: str, n: int, tag: str) -> RunSpec:
    """The seeded batch an evolve runs on ``split`` (``tag`` ``train`` or ``valid``): the same tasks and
    seeds for every candidate, and for anything that wants to share the evolve's stored H0 runs."""
    seed = derive_seed(config.seed, "pool-evolve", tag) % 2**31
    return RunSpec(
        env=config.env, agent=config.agent, split=split, n=n, seed=seed, concurrency=config.concurrency
    )


def pick_finalists(eligible: list[Lineage], most: int) -> list[Lineage]:
    """The finalists of one direction and generation, best first: the fittest eligible candidate (ties:
    fewer broken, then proposal order), then each next-fittest one that rescues a train task no finalist
    before it rescues — a second repair of the same cluster only when it repairs something else, since the
    complementary selection on ``valid`` then decides between them."""
    ranked = sorted(eligible, key=lambda c: (-c.fitness, len(c.broken)))  # stable: proposal order
    chosen: list[Lineage] = []
    covered: set[str] = set()
    for lineage in ranked:
        if len(chosen) >= most:
            break
        if chosen and not set(lineage.rescued) - covered:
            continue
        chosen.append(lineage)
        covered |= set(lineage.rescued)
    return chosen


class Evolution:
    """One ``pool evolve`` (see the module docstring); :func:`evolve` runs it."""

    def __init__(
        self, config: EvolveConfig, agent: Agent, engineer_factory: Callable[[Direction], Any], events: Events
    ) -> None:
        self.config, self.agent, self.events = config, agent, events
        self.engineer_factory = engineer_factory
        self.out = Path(config.out)
        self.work = self.out / "evolve"
        self.runs = self.work / "runs"
        self.h0 = start_harness_config(config.harness, config.env)
        chosen = load_directions(config.directions)
        if config.holdout_direction:
            select_directions(chosen, [config.holdout_direction])  # an unknown name is an error
            chosen = tuple(d for d in chosen if d.name != config.holdout_direction)
        self.directions = chosen
        self.candidates: list[dict[str, Any]] = []

    def spec(self, split: str, n: int, tag: str) -> RunSpec:
        return batch_spec(self.config, split, n, tag)

    async def measure(self, lineage: Lineage, base: Baseline, label: str) -> list[EpisodeRecord]:
        harness = Target(lineage.config(self.h0), lineage.patches).harness(
            max_workers=min(8, self.config.concurrency)
        )
        return await run_paired(
            harness, base, self.agent, self.runs, label, self.events, prefix_reuse=self.config.prefix_reuse
        )

    async def proposals(
        self, direction: Direction, parent: Lineage, cluster: list[EpisodeRecord], generation: int
    ) -> list[Lineage]:
        from reharness.failures.packets import extract_packet

        out: list[Lineage] = []
        engineer = self.engineer_factory(direction)
        if engineer is not None:
            packet = extract_packet(cluster)
            header = packet.header.model_copy(
                update={
                    "instructions": [
                        *packet.header.instructions,
                        *direction_packet_notes(direction, parent, self.h0),
                    ]
                }
            )
            packet = packet.model_copy(update={"header": header})
            seed = derive_seed(self.config.seed, "pool-engineer", direction.name, generation) % 2**31
            for i, proposal in enumerate(await engineer.propose(packet, self.config.k, seed=seed)):
                if proposal.patch is None:
                    continue
                if proposal.patch.identity in {p.identity for p in parent.patches}:
                    continue
                names = "+".join(o["name"] for o in proposal.meta.get("operators", [])) or f"proposal {i}"
                out.append(
                    Lineage(
                        direction.name,
                        generation,
                        dict(parent.delta),
                        (*parent.patches, proposal.patch),
                        f"patch: {names}",
                        parent=parent.cid,
                    )
                )
        mutations = (
            config_mutations(direction, parent.config(self.h0)) if self.config.config_mutations else []
        )
        for delta in mutations:
            merged = dict(parent.delta) | delta
            if merged == parent.delta:
                continue
            text = ", ".join(f"{k}={v!r}"[:60] for k, v in delta.items())
            out.append(
                Lineage(
                    direction.name, generation, merged, parent.patches, f"config: {text}", parent=parent.cid
                )
            )
        for i, lineage in enumerate(out):
            lineage.cid = f"{direction.name}-g{generation}-c{i}"
        return out

    async def direction(self, direction: Direction, base: Baseline) -> list[Lineage]:
        failures = [e for e in base.episodes if not e.success]
        cluster = [e for e in failures if direction.covers(e.failure_codes)]
        if not cluster:
            self.events.stage(f"{direction.name}: no train failure in its cluster; skipped")
            return []
        cluster_ids = {e.task_id for e in cluster}
        parent, finalists = Lineage(direction.name, 0), []
        for generation in range(1, self.config.generations + 1):
            candidates = await self.proposals(direction, parent, cluster, generation)
            self.events.stage(
                f"{direction.name} g{generation}: {len(candidates)} candidates, {len(cluster)} cluster tasks"
            )
            eligible_ones: list[Lineage] = []
            for lineage in candidates:
                records = await self.measure(lineage, base, lineage.cid)
                paired = compare(lineage.cid, base.episodes, records)
                lineage.rescued, lineage.broken = paired.rescued, paired.broken
                lineage.effect_steps = paired.effect_steps
                lineage.fitness = round(
                    len(set(paired.rescued) & cluster_ids) - self.config.lam * len(paired.broken), 6
                )
                eligible = (
                    len(paired.broken) <= self.config.max_regressions and lineage.fitness > parent.fitness
                )
                self.candidates.append(
                    {
                        "id": lineage.cid,
                        "direction": direction.name,
                        "generation": generation,
                        "parent": lineage.parent,
                        "origin": lineage.origin,
                        "fitness": lineage.fitness,
                        "rescued": paired.rescued,
                        "cluster_rescued": sorted(set(paired.rescued) & cluster_ids),
                        "broken": paired.broken,
                        "effect_steps": paired.effect_steps,
                        "eligible": eligible,
                    }
                )
                if eligible:
                    eligible_ones.append(lineage)
            chosen = pick_finalists(eligible_ones, self.config.finalists)
            if not chosen:
                self.events.stage(f"{direction.name} g{generation}: no candidate beat its parent")
                break
            best = chosen[0]
            self.events.stage(
                f"{direction.name} g{generation}: {best.cid} ({best.origin}) fitness {best.fitness:+g}"
                + (f"; also {', '.join(c.cid for c in chosen[1:])}" if chosen[1:] else "")
            )
            finalists += chosen
            parent = best
        return finalists

    async def run(self) -> EvolveResult:
        c = self.config
        self.work.mkdir(parents=True, exist_ok=True)
        (self.work / "config.json").write_text(
            json.dumps(c.model_dump(mode="json"), indent=2) + "\n", "utf-8"
        )
        self.events.stage(f"H0 on {c.batch_size} train tasks")
        train = await get_baseline(
            self.spec("train", c.batch_size, "train"), self.agent, Target(self.h0), self.runs
        )
        clusters = {
            d.name: sorted(e.task_id for e in train.episodes if not e.success and d.covers(e.failure_codes))
            for d in self.directions
        }
        finalists: list[Lineage] = []
        for direction in self.directions:
            finalists += await self.direction(direction, train)
        self.events.stage(f"H0 and {len(finalists)} finalists on {c.valid_n} valid tasks")
        valid = await get_baseline(
            self.spec("valid", c.valid_n, "valid"), self.agent, Target(self.h0), self.runs
        )
        measured = []
        for lineage in finalists:
            records = await self.measure(lineage, valid, f"valid {lineage.cid}")
            paired = compare(lineage.cid, valid.episodes, records)
            measured.append(
                ValidMeasure(lineage, paired.rescued, paired.broken, paired.patched_success, records)
            )
        admitted = complementary(measured, c.size, c.min_new)
        return await self.finish(train, valid, clusters, measured, admitted)

    async def finish(
        self,
        train: Baseline,
        valid: Baseline,
        clusters: dict[str, list[str]],
        measured: list[ValidMeasure],
        admitted: list[ValidMeasure],
    ) -> EvolveResult:
        from reharness.pool.policy_ref import policy_ref

        c = self.config
        siblings = []
        for m in admitted:
            lin = m.lineage
            siblings.append(
                Sibling(
                    name=f"{lin.direction}-{lin.cid.rsplit('-', 2)[1]}{lin.cid.rsplit('-', 1)[1]}",
                    direction=lin.direction,
                    base=self.h0,
                    delta=lin.delta,
                    patches=lin.patches,
                    description=f"{lin.origin} (on top of {lin.parent})"
                    if lin.parent not in (None, "H0")
                    else lin.origin,
                    provenance=Provenance(
                        engineer=c.engineer, seed=c.seed, generation=lin.generation, parent=lin.parent
                    ),
                    evidence={
                        "candidate": lin.cid,
                        "train_fitness": lin.fitness,
                        "train_rescued": len(lin.rescued),
                        "train_broken": len(lin.broken),
                        "valid_rescued": len(m.rescued),
                        "valid_broken": len(m.broken),
                        "valid_success": m.success,
                    },
                )
            )
        meta = {
            "evolve": c.model_dump(mode="json", exclude={"out", "concurrency"}),
            "h0_train_success": train.result.success_rate,
            "h0_valid_success": valid.result.success_rate,
            "holdout_direction": c.holdout_direction,
        }
        pool = Pool(c.env, self.h0, siblings, policy_ref(c.agent, self.agent), self.directions, meta)
        (self.work / "candidates.jsonl").write_text(
            "".join(json.dumps(r, sort_keys=True) + "\n" for r in self.candidates), "utf-8"
        )
        pool.save(self.out)
        if pool.siblings:  # the validation profile: the evidence of the default (validation) route
            from reharness.pool.profile import measure_profile

            records = {s.id: m.records for s, m in zip(siblings, admitted, strict=True)}
            measure_profile(pool, valid.episodes, records, policy=pool.policy, split="valid").save(pool)
        else:  # a profile left by an earlier evolve into the same --out belongs to another pool
            (self.out / "profile.json").unlink(missing_ok=True)
        result = EvolveResult(pool, admitted, measured, train, valid, clusters, self.candidates, self.out)
        from reharness.pool.evolve_report import write_report

        write_report(result)
        return result


async def evolve(
    config: EvolveConfig,
    *,
    agent: Agent | None = None,
    events: Events | None = None,
    notify: Callable[[str], None] | None = None,
) -> EvolveResult:
    """Run a directional evolution; ``agent`` overrides ``config.agent`` (the caller then closes it)."""
    from reharness.engineer.factory import make_engineer
    from reharness.engineer.operators import OperatorEngineer
    from reharness.envs.registry import resolve_env_name
    from reharness.runtime.agent_specs import make_agent

    env = resolve_env_name(config.env).name
    config = config.model_copy(update={"env": env})
    # a model engineer is built (and its model loaded) once for the whole evolve; the packet's instructions
    # constrain it to each direction. The operators engineer is constrained by its operator set instead.
    shared = None if config.engineer == "operators" else make_engineer(config.engineer)

    def engineer_for(direction: Direction) -> Any:
        if shared is not None:
            return shared
        ops = direction_operators(direction, env)
        return OperatorEngineer(ops) if ops else None

    own = agent is None
    try:
        policy = agent if agent is not None else make_agent(config.agent, notify=notify)
    except BaseException:
        if shared is not None:
            await shared.close()
        raise
    try:
        return await Evolution(config, policy, engineer_for, events or Events()).run()
    finally:
        if own:
            await policy.close()
        if shared is not None:
            await shared.close()

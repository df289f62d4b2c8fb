"""Policy GRPO with sibling rescue (Harness-S): TRL's ``GRPOTrainer`` whose rollouts are our episodes.

Why a subclass and not only ``rollout_func``: TRL groups rows by position (K consecutive rows per prompt)
and computes advantages from one reward per row. Our rows are not one-per-rollout — a multi-turn episode
under a harness that is not append-only becomes several rows sharing the episode's advantage, and a
``mixed`` rescue group can hold more than K rollouts — so the smallest override is
:meth:`EpisodeGRPOTrainer._generate_and_score_completions`: it runs the step's episodes through the
:class:`~reharness.training.rescue.Rescuer`, computes group-normalised advantages per episode, and returns
the row-aligned tensors TRL's loss reads (left-padded prompts, right-padded completions, the policy-token
mask as ``tool_mask``, per-row advantages, ``num_items_in_batch``). Everything else — the clipped token-mean
surrogate (``loss_type="dapo"``, ε 0.2/0.28, no KL), gradient accumulation over ``micro_batches`` chunks,
the optimizer, checkpoints, TensorBoard — is TRL's and ``transformers``'. One more override runs each chunk
one row at a time without padding (:mod:`reharness.training.row_chunks`: exact for the DAPO loss, and it
keeps a long episode's attention off the quadratic-memory kernel).

Costs are counted per role (H0 rollouts, rescue or resample rollouts): episodes, model calls, tokens and
seconds, and the optimisation time is measured apart; every step appends one line to ``OUT/metrics.jsonl``.
A rerun of the same command resumes from the last checkpoint (``OUT/checkpoints``): the metrics, the router's
decision log and its learned profile are cut back to that checkpoint (emptied when the run stopped before
its first one), and the lost steps are recomputed exactly (rollout seeds depend only on (seed, step, task,
rollout)).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from reharness.training.episode_rows import Row, RowStats, episode_rows, group_advantages, pad_rows
from reharness.training.policy_config import PolicyTrainConfig
from reharness.training.rescue import Rescuer, StepReport
from reharness.training.rollouts import params_hash

METRICS_FILE = "metrics.jsonl"
STATE_FILE = "rescue_state.json"


def reply_budget(model: Any) -> int | None:
    """The model's own reply budget (``generation_config.max_new_tokens``; the tiny agents set it)."""
    value = getattr(getattr(model, "generation_config", None), "max_new_tokens", None)
    return int(value) if value else None


def _trainer_class() -> type:
    from trl import GRPOTrainer

    class EpisodeGRPOTrainer(GRPOTrainer):  # type: ignore[misc]
        """GRPO on reharness episodes (see the module docstring)."""

        _row: dict[str, Any] | None = None  # the row :meth:`training_step` is running alone, if any

        def setup_episodes(self, session: Any) -> None:
            self.session = session

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            k = self.num_generations
            tasks = [int(row["task_index"]) for row in inputs[::k]]
            rows, stats = self.session.rollout_step(int(self.state.global_step), tasks)
            rows = pad_rows(rows, int(getattr(self.args, "steps_per_generation", 1)))
            return self._tensors(rows, stats)

        def _prepare_inputs(self, generation_batch: Any) -> Any:
            return self._row if self._row is not None else super()._prepare_inputs(generation_batch)

        def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any:
            """One accumulation chunk, one forward and backward pass per row (:mod:`.row_chunks`)."""
            from reharness.training.row_chunks import split_rows

            chunk = super()._prepare_inputs(inputs)  # generates the step's rows on its first chunk
            rows = (split_rows(chunk) if self.loss_type == "dapo" else None) or [chunk]
            step, total = self._step, None
            times = self._metrics["train"]["step_time"]
            logged = len(times)
            try:  # TRL's own ``_prepare_inputs`` must not run again: it would generate the step twice
                for row in rows:
                    self._row, self._step = row, step  # TRL counts one accumulation step per call
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    total = loss if total is None else total + loss
            finally:
                self._row = None
            if len(times) > logged + 1:  # each row of the step's last chunk logged its share: one entry
                times[logged:] = [sum(times[logged:])]
            return total

        def _tensors(self, rows: list[Row], stats: dict[str, Any]) -> dict[str, Any]:
            import torch
            from trl.trainer.utils import pad

            device = self.accelerator.device
            pad_id = self.session.tokenizer.pad_token_id
            prompts = [torch.tensor(r.prompt_ids) for r in rows]
            completions = [torch.tensor(r.completion_ids) for r in rows]
            prompt_ids = pad(prompts, padding_value=pad_id, padding_side="left").to(device)
            prompt_mask = pad([torch.ones_like(p) for p in prompts], padding_value=0, padding_side="left")
            completion_ids = pad(completions, padding_value=pad_id, padding_side="right").to(device)
            completion_mask = pad(
                [torch.ones_like(c) for c in completions], padding_value=0, padding_side="right"
            )
            loss_mask = pad(
                [torch.tensor(r.loss_mask) for r in rows], padding_value=0, padding_side="right"
            ).to(device)
            advantages = torch.tensor([r.advantage for r in rows], dtype=torch.float32, device=device)
            metrics = self._metrics["train"]
            for name in ("train_reward", "h0_success", "all_fail_share", "rescue_success_share"):
                metrics[name].append(float(stats[name]))
            metrics["rows"].append(float(len(rows)))
            metrics["reward"].append(float(stats["train_reward"]))
            return {
                "prompt_ids": prompt_ids,
                "prompt_mask": prompt_mask.to(device),
                "completion_ids": completion_ids,
                "completion_mask": completion_mask.to(device),
                "tool_mask": loss_mask,
                "advantages": advantages,
                "num_items_in_batch": (completion_mask.to(device) * loss_mask).sum(),
            }

        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            if "loss" in logs:
                self.session.write_metrics(int(self.state.global_step), logs)
            super().log(logs, start_time)

    return EpisodeGRPOTrainer


class TrainingSession:
    """The state of one ``train policy`` run around TRL: the live policy backend, the rollout engine, the
    rescuer and router, the metrics file, the re-anchoring schedule."""

    def __init__(
        self,
        config: PolicyTrainConfig,
        tokenizer: Any,
        model: Any,
        out: Path,
        executor: Any = None,
        model_dir: Path | None = None,
    ) -> None:
        from reharness.failures import failure_codes
        from reharness.models.hf_backend import HFBackend, agent_defaults
        from reharness.runtime.harness import Harness
        from reharness.training.rollouts import RolloutEngine

        self.config, self.out, self.model, self.tokenizer = config, out, model, tokenizer
        self.loop = asyncio.new_event_loop()
        self.backend = HFBackend(
            out,
            policy_id=f"train:{config.agent}",
            loaded=(tokenizer, model),
            max_batch_size=config.concurrency,
            end_at_action=bool(agent_defaults(model_dir).get("end_at_action")) if model_dir else False,
        )
        self.remote = _rollouts_on(executor)
        self.engine: Any
        if self.remote:  # the step's rollouts on Ray actors holding synced copies of the policy
            from reharness.training.ray_rollouts import RayRolloutEngine

            self.engine = RayRolloutEngine(
                executor,
                str(model_dir or config.agent),
                config.env,
                config.split,
                self.backend.policy_id,
                concurrency=config.concurrency,
            )
        else:  # only the engine that plays the rollouts is built (a local one owns a thread pool)
            self.engine = RolloutEngine(
                config.env, config.split, self.backend, concurrency=config.concurrency, annotate=failure_codes
            )
        self.profile_warning: str | None = None
        self.pool, self.router = self._pool()
        # H0 is the pool's base harness when there is a pool (the one its siblings were evolved from)
        self.h0 = Harness(self.pool.h0) if self.pool is not None else Harness.base(config.env)
        self.rescuer = Rescuer(
            self.engine,
            self.h0,
            rescue=config.rescue,
            k=config.k,
            seed=config.seed,
            temperature=config.temperature,
            top_p=config.top_p,
            pool=self.pool,
            router=self.router,
            rescue_group=config.rescue_group,
            audit=config.audit,
            max_tokens=config.max_new_tokens or reply_budget(model),
        )
        self.pending: dict[str, Any] = {}
        self.totals = {"rollouts": 0, "rescues_tried": 0, "rescues_succeeded": 0}
        #: what the rollouts and the re-anchorings cost over the run, per role (``reanchor``: profiling)
        self.costs: dict[str, dict[str, float]] = {}
        self.last_report: StepReport | None = None
        self.row_stats = RowStats()
        self._last_end: float | None = None
        self.pending_reanchor: dict[str, Any] | None = None

    def _pool(self) -> tuple[Any, Any]:
        if not self.config.pool:
            return None, None
        from reharness.pool.pool import load_pool
        from reharness.pool.profile import load_profile
        from reharness.pool.router import Router

        pool = load_pool(self.config.pool)  # H0 is the pool's for every method, so methods compare
        if self.config.rescue == "placebo":
            from reharness.pool.placebo import placebo_pool

            return placebo_pool(pool), None
        if self.config.rescue != "router":
            return pool, None
        judges: list[Any] = []
        if self.config.route == "vote":
            from reharness.pool.judges import make_judge

            specs = [*self.config.judges, *([self.config.judge_model] if self.config.judge_model else [])]
            judges = [make_judge(spec, seed=self.config.seed) for spec in specs]
        profile = load_profile(pool)
        if not self.config.reanchor_at_start:
            from reharness.training.reanchor import temperature_mismatch

            self.profile_warning = temperature_mismatch(profile, pool, self.config.temperature)
            if self.profile_warning:
                print(self.profile_warning, file=sys.stderr, flush=True)
        router = Router(
            pool,
            profile,
            strategy=self.config.route,
            top_k=self.config.vote_k if self.config.route == "vote" else 1,
            judges=judges,
            seed=self.config.seed,
            log=self.out / "decisions.jsonl",
        )
        return pool, router

    # ------------------------------------------------------------------ one step
    def rollout_step(self, step: int, tasks: list[int]) -> tuple[list[Row], dict[str, Any]]:
        """The rows of optimizer step ``step`` (0-based) for ``tasks``, and what the rollouts cost."""
        every = self.config.reanchor_every
        start = step == 0 and self.config.reanchor_at_start
        if self.router is not None and (start or (every and step and not step % every)):
            self.loop.run_until_complete(self.reanchor(step))
        before = self.engine.stats.as_dict()
        self.model.eval()
        self.backend.weights_changed()
        try:
            if self.remote:  # one state_dict into the object store, loaded and hash-checked by each actor
                self.loop.run_until_complete(self.engine.sync(self.model))
            report = self.loop.run_until_complete(self.rescuer.step(step, tasks))
        finally:
            self.model.train()
        self.last_report = report
        rows, stats = self._rows(report)
        summary = report.summary() | report.rescued_turns()
        after = self.engine.stats.as_dict()
        costs = {
            key: {role: after[key].get(role, 0) - before[key].get(role, 0) for role in after[key]}
            for key in after
        }
        rollouts = sum(costs["episodes"].values())
        self._add_costs(costs)
        self.totals["rollouts"] += rollouts
        self.totals["rescues_tried"] += summary["rescues_tried"]
        self.totals["rescues_succeeded"] += summary["rescues_succeeded"]
        groups = max(1, summary["groups"])
        summary |= {
            "all_fail_share": summary["all_fail_groups"] / groups,
            "rescue_success_share": summary["rescues_succeeded"] / max(1, summary["rescues_tried"]),
        }
        self.pending = {
            "step": step + 1,
            "tasks": tasks,
            **summary,
            "rows": stats.rows,
            "merged_turns": stats.merged_turns,
            "split_turns": stats.split_turns,
            "masked_turns": stats.masked_turns,
            "executed_turns": stats.executed_turns,
            "trained_tokens": stats.trained_tokens,
            "rollouts": rollouts,
            "costs": costs,
            "rescues": [vars(a) for a in report.attempts],
            "seconds": {
                "h0_rollouts": costs["seconds"].get("h0", 0.0),
                "rescue_rollouts": sum(costs["seconds"].get(r, 0.0) for r in ("rescue", "resample")),
            },
        }
        self._last_end = time.perf_counter()
        return rows, summary

    def _rows(self, report: StepReport) -> tuple[list[Row], RowStats]:
        rewards = [[1.0 if r.success else 0.0 for r in g.rollouts] for g in report.groups]
        advantages = group_advantages(rewards, self.config.scale_rewards)
        rows: list[Row] = []
        stats = RowStats()
        encode = self._encode_action if self.config.rewritten_turns == "executed" else None
        for group, advs in zip(report.groups, advantages, strict=True):
            for rollout, advantage in zip(group.rollouts, advs, strict=True):
                if advantage == 0.0:
                    continue  # nothing to learn from (a group without variance)
                got, s = episode_rows(rollout, advantage, self.config.rewritten_turns, encode)
                rows += got
                stats.add(s)
        self.row_stats.add(stats)
        return rows, stats

    def _encode_action(self, action: str) -> list[int]:
        ids = self.tokenizer.encode(f"Action: {action}", add_special_tokens=False)
        return [int(i) for i in ids] + [int(self.tokenizer.eos_token_id)]

    def _add_costs(self, costs: dict[str, dict[str, float]]) -> None:
        for key, by_role in costs.items():
            if key == "seconds":
                continue
            mine = self.costs.setdefault(key, {})
            for role, value in by_role.items():
                mine[role] = mine.get(role, 0) + value

    async def reanchor(self, step: int, name: str | None = None) -> None:
        """Re-measure the pool's profile with the current weights on ``reanchor_n`` valid tasks, at the
        rollout temperature, ``profile_samples`` times (:mod:`reharness.training.reanchor`)."""
        from reharness.training.reanchor import reanchor_profile

        assert self.router is not None and self.pool is not None
        self.model.eval()
        self.backend.weights_changed()
        weights = params_hash(self.model)
        try:
            profile, cost = await reanchor_profile(
                self.pool,
                self.backend,
                env=self.config.env,
                label=f"train-policy:{weights}",
                weights=weights,
                n=self.config.reanchor_n,
                seed=self.config.seed,
                concurrency=self.config.concurrency,
                temperature=self.config.temperature,
                top_p=self.config.top_p,
                samples=self.config.profile_samples,
                runs=self.out / "reanchor",
            )
        finally:
            self.model.train()
        self.router.profile = profile
        target = self.out / "profiles" / (name or f"step-{step:05d}.json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(profile.model_dump_json(indent=1), encoding="utf-8")
        self._add_costs({key: {"reanchor": value} for key, value in cost.items()})
        self.pending_reanchor = {
            "step": step,
            "policy_hash": profile.policy_hash,
            "file": str(target),
            "temperature": profile.temperature,
            "samples": profile.samples,
            "costs": cost,
        }

    # ------------------------------------------------------------------ records
    def write_metrics(self, step: int, logs: dict[str, float]) -> None:
        line = dict(self.pending) | {"step": step, "trl": {k: float(v) for k, v in logs.items()}}
        if self._last_end is not None and "seconds" in line:  # the optimizer step ran since the rollouts
            line["seconds"] = dict(line["seconds"]) | {
                "optimisation": round(time.perf_counter() - self._last_end, 3)
            }
        anchor = self.pending_reanchor
        if anchor is not None:
            line["reanchor"] = anchor
            self.pending_reanchor = None
        with (self.out / METRICS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, sort_keys=True, default=str) + "\n")

    def state(self) -> dict[str, Any]:
        decisions = self.out / "decisions.jsonl"
        lines = len(decisions.read_text(encoding="utf-8").splitlines()) if decisions.is_file() else 0
        return {
            "totals": self.totals,
            "costs": self.costs,
            "decision_lines": lines,
            "profile": self.router.profile.model_dump(mode="json") if self.router is not None else None,
        }

    def restore(self, checkpoint: Path | None) -> None:
        """Cut the metrics and the decision log back to ``checkpoint`` (``OUT/checkpoints/checkpoint-N``) and
        reload the router's profile.

        ``checkpoint`` None: a run that stopped before its first checkpoint starts over, so the lines its lost
        steps wrote are dropped, not counted twice beside the recomputed ones."""
        from reharness.pool.profile import Profile

        step = int(checkpoint.name.rsplit("-", 1)[-1]) if checkpoint is not None else 0
        file = checkpoint / STATE_FILE if checkpoint is not None else None
        saved = json.loads(file.read_text(encoding="utf-8")) if file is not None and file.is_file() else {}
        self.totals = saved.get("totals", self.totals)
        self.costs = saved.get("costs", self.costs)
        kept = _truncate(self.out / METRICS_FILE, lambda line: json.loads(line).get("step", 0) <= step)
        # the rows trained so far, from the kept steps' lines: the summary counts the run, not the resume
        self.row_stats = RowStats()
        for line in map(json.loads, kept):
            self.row_stats.add(RowStats(**{name: int(line.get(name, 0)) for name in vars(RowStats())}))
        decisions = self.out / "decisions.jsonl"
        if decisions.is_file():
            keep = decisions.read_text(encoding="utf-8").splitlines()[: saved.get("decision_lines", 0)]
            decisions.write_text("".join(line + "\n" for line in keep), encoding="utf-8")
            if self.router is not None and self.router.log is not None:
                self.router.log.close()
                from reharness.pool.decision import DecisionLog

                self.router.log = DecisionLog(decisions)
        if self.router is not None and saved.get("profile") is not None:
            self.router.profile = Profile.model_validate(saved["profile"])

    def close(self) -> None:
        async def _close() -> None:
            await self.engine.close(self.rescuer.harnesses())
            await self.backend.close()
            if self.router is not None:
                await self.router.close()

        self.loop.run_until_complete(_close())
        self.loop.close()


def _rollouts_on(executor: Any) -> bool:
    """Whether ``executor`` (the command's, or None: local) puts the rollouts on Ray policy actors."""
    name = getattr(executor, "name", "local")
    if name not in ("local", "ray"):
        from reharness.core.errors import ConfigError

        raise ConfigError(
            f"train policy cannot run its rollouts on the {name!r} executor (they decode the live weights)",
            hint="use --executor local or --executor ray",
        )
    return name == "ray"


def _truncate(file: Path, keep: Any) -> list[str]:
    """Keep the lines of ``file`` that ``keep`` accepts; returns them."""
    if not file.is_file():
        return []
    lines = [line for line in file.read_text(encoding="utf-8").splitlines() if line.strip() and keep(line)]
    file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return lines

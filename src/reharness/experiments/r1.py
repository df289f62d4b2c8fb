"""``reharness experiment r1``: the shape of Harness-R1's main table at small scale.

1. **Train** (resumable, the same functions as ``reharness train engineer``): packets of ``batches`` train
   batches per environment with the frozen target, the cold-start SFT set from the ``operators`` teacher, SFT
   of the tiny engineer, then GRPO from it (``OUT/train/{data,sft,grpo}``; a stage whose model directory
   exists is not retrained).
2. **Evaluate** on ``test_batches`` held-out batches of the *test* split per environment (never used in
   training): the target runs each batch (cached baseline), the batch's failure packet goes to every
   method, which writes one patch (one sample, seeded), and the patch is measured by paired rerun on the
   same tasks and seeds — Harness-R1's protocol (each packet gets a fresh overlay; an invalid or degenerate
   patch scores as no patch). Methods: ``none`` (the unpatched target), ``self-refine``, ``operators`` (the
   teacher), ``sft`` (the SFT-only engineer) and ``grpo`` (the GRPO engineer); with ``editor`` also
   ``prompted`` (a model prompted to edit the harness: Harness-R1's prompted-editor row, one sample, never
   resampled); with ``controls`` (default) also ``grpo-shuffled``, ``placebo`` and ``best-of-n``
   (:mod:`.r1_controls`).
3. **Report**: per (method, env) the success rate over all test tasks with a 95 % bootstrap interval over
   tasks and the number of broken tasks (success → failure); the per-method average over environments
   (:meth:`R1Result.contract` is the ``--json`` output) and paired comparisons with bootstrap intervals
   (:mod:`.r1_compare`: GRPO vs SFT and vs the teacher, per environment and on the average); ``report.md``
   with the tables and two plots (GRPO reward per step, success per method) when matplotlib is installed.

Every evaluated (env, batch, method) is appended to ``OUT/eval.jsonl`` as it finishes, so an interrupted
experiment resumes. The stages live in :mod:`.r1_stages` and :mod:`.r1_eval`, the controls in
:mod:`.r1_controls`, the paired comparisons in :mod:`.r1_compare`; transfer to an unseen target, held-out
generalisation (10 failures → one patch) and the hook ablation in :mod:`.r1_studies`; the report in
:mod:`.r1_report`. This module only runs them in order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.core.resume import refuse_other_options
from reharness.experiments import r1_studies
from reharness.experiments.r1_compare import comparisons
from reharness.experiments.r1_controls import best_of_n_budget
from reharness.experiments.r1_eval import Evaluator, make_method
from reharness.experiments.r1_report import write_report
from reharness.experiments.r1_stages import (
    CONTROLS,
    EVAL_FILE,
    METHODS,
    R1Config,
    R1Result,
    R1Row,
    aggregate,
    train,
)

if TYPE_CHECKING:
    from reharness.runtime.agents import Agent

__all__ = [
    "CONTROLS",
    "EVAL_FILE",
    "METHODS",
    "Evaluator",
    "R1Config",
    "R1Result",
    "R1Row",
    "aggregate",
    "make_method",
    "run_r1",
    "train",
]


#: options that do not change the trained engineers or the main-table evaluation of an experiment
_STUDY_FIELDS = frozenset(
    {
        "test_batches",
        "concurrency",
        "batch_concurrency",
        "out",
        "transfer_agent",
        "generalisation_seeds",
        "heldout_n",
        "ablation",
        "controls",
        "hint_probe",
        "editor",
        "editor_language",
        "editor_prompt",
        "editor_constrain",
        "editor_max_tokens",
    }
)


#: options added with a default other than what earlier experiments did (GRPO trained on every packet and
#: kept its last step)
_EARLIER_BEHAVIOUR = {"grpo_packets": "all", "grpo_select": "last"}


def _check_same_experiment(out: Path, config: R1Config) -> None:
    """Refuse to mix an earlier experiment's trained engineers and evaluations with other options."""
    refuse_other_options(
        out / "r1_config.json",
        config,
        run="an r1 experiment run",
        free=_STUDY_FIELDS,
        earlier=_EARLIER_BEHAVIOUR,
    )


def run_r1(
    config: R1Config,
    *,
    agents: Mapping[str, Agent] | None = None,
    transfer_agents: Mapping[str, Agent] | None = None,
    notify: Callable[[str], None] = lambda text: None,
    progress: Any = None,
) -> R1Result:
    """Train (or load) the engineers, evaluate every method on the test batches, run the studies, report."""
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    _check_same_experiment(out, config)
    (out / "r1_config.json").write_text(json.dumps(config.model_dump(mode="json"), indent=2) + "\n", "utf-8")
    training = train(config, agents, notify, progress)
    records = asyncio.run(Evaluator(config, agents, notify, progress=progress).run())
    rows, average = aggregate(config, records)
    result = R1Result(config=config, rows=rows, average=average, training=training)
    result.comparisons = comparisons(records, config.envs, seed=config.seed)
    if config.controls:
        result.controls = {"best_of_n": best_of_n_budget(config)}
    if config.transfer_agent:
        result.transfer, result.transfer_average = r1_studies.transfer(
            config, config.transfer_agent, transfer_agents, notify
        )
    if config.generalisation_seeds:
        result.generalisation = r1_studies.generalisation(
            config,
            seeds=config.generalisation_seeds,
            heldout_n=config.heldout_n,
            agents=agents,
            notify=notify,
        )
    if config.ablation:
        result.ablation = r1_studies.ablation(config, records, agents, notify)
        result.hook_effects = r1_studies.hook_effects(config, records)
    if config.hint_probe:
        from reharness.experiments.r1_probe import hint_probe

        result.hint_probe = hint_probe(config, agents, notify)
    (out / "result.json").write_text(json.dumps(result.model_dump(mode="json"), indent=2) + "\n", "utf-8")
    write_report(result, out)
    return result

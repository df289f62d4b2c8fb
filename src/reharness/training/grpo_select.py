"""GRPO checkpoint selection on the ``valid`` split, and how far GRPO moved the greedy engineer from SFT.

With ``GRPOStageConfig.select == "valid"``, every saved checkpoint (``OUT/checkpoints/checkpoint-N``, one per
``save_steps``), the final model and the SFT start (step 0) are scored on the valid packets exactly as
:func:`reharness.training.select.valid_score` scores an engineer: one greedy reply per packet, its patch
measured by paired rerun on the packet's recorded tasks and seeds (invalid ⇒ 0). The engineer kept in ``OUT``
is the step with the highest mean Δ_B; a tie goes to the *later* step, so where ``valid`` cannot tell the
checkpoints apart the result is the last step, as without selection. The ``test`` split is never read.

For every scored step, :func:`program_change` compares its greedy replies with the SFT engineer's on the same
valid packets: the share of packets whose greedy reply differs and the mean token edit distance (the
engineer's own tokenizer) — the issue's "token-level change of the greedy program from SFT's". The curve
(``valid_curve``), the chosen step (``selected_step``) and the change go to ``engineer.json``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reharness.engineer.compact import PromptStyle
    from reharness.runtime.agents import Agent

_STEP = re.compile(r"checkpoint-(\d+)$")


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Levenshtein distance of two token sequences."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def program_change(sft: Sequence[str], other: Sequence[str], tokenize: Any) -> dict[str, float]:
    """``{"changed", "mean_edit_distance"}``: the share of packets whose reply differs from SFT's, and the
    mean token edit distance between the two replies (``tokenize``: text → token ids)."""
    pairs = list(zip(sft, other, strict=True))
    if not pairs:
        return {"changed": 0.0, "mean_edit_distance": 0.0}
    distances = [edit_distance(tokenize(a), tokenize(b)) for a, b in pairs]
    return {
        "changed": round(sum(a != b for a, b in pairs) / len(pairs), 6),
        "mean_edit_distance": round(sum(distances) / len(distances), 4),
    }


def checkpoints(out: Path) -> list[tuple[int, Path]]:
    """The saved checkpoints of a GRPO output directory, by step."""
    root = out / "checkpoints"
    found = [(int(m.group(1)), p) for p in root.glob("checkpoint-*") if (m := _STEP.search(p.name))]
    return sorted(found)


def select_on_valid(
    out: Path,
    sft_dir: str | Path,
    style: PromptStyle,
    summary: dict[str, Any],
    rows: list[dict[str, Any]],
    runs: str | Path,
    agents: Mapping[str, Agent] | None,
    seed: int,
    steps: int,
) -> dict[str, Any]:
    """Score SFT, every checkpoint and the final model on ``rows`` (valid packets), keep the best in ``out``
    (ties: the later step) and return ``{"valid_curve", "selected_step", "change"}``."""
    from reharness.training.engineer_model import load_engineer, save_engineer
    from reharness.training.select import valid_score

    tokenizer, _, _ = load_engineer(out)

    def tokenize(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    scored: dict[int, dict[str, Any]] = {0: valid_score(sft_dir, rows, runs, agents, seed)}
    staging = out / "select"
    for step, path in checkpoints(out):
        if step >= steps:  # the final model is scored from OUT itself
            continue
        tok, model, _ = load_engineer(path)
        save_engineer(model, tok, staging / f"step-{step}", style, {"stage": "grpo", "step": step})
        scored[step] = valid_score(staging / f"step-{step}", rows, runs, agents, seed)
    scored[steps] = valid_score(out, rows, runs, agents, seed)
    sft_replies = scored[0]["replies"]
    curve = [
        {
            "step": step,
            "mean_delta": s["mean_delta"],
            "valid": s["valid"],
            "packets": s["packets"],
            **program_change(sft_replies, s["replies"], tokenize),
        }
        for step, s in sorted(scored.items())
    ]
    best = max(curve, key=lambda c: (c["mean_delta"] or 0.0, c["step"]))
    chosen = best["step"]
    if chosen != steps:  # keep the chosen weights as the engineer
        source = Path(sft_dir) if chosen == 0 else staging / f"step-{chosen}"
        tok, model, _ = load_engineer(source)
        save_engineer(model, tok, out, style, summary)
    shutil.rmtree(staging, ignore_errors=True)
    return {
        "valid_curve": curve,
        "selected_step": chosen,
        "change": {k: best[k] for k in ("changed", "mean_edit_distance")},
        "replies": {"sft": sft_replies, "selected": scored[chosen]["replies"]},
    }

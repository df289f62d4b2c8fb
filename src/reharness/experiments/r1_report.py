"""The Markdown report of ``reharness experiment r1``: main table, training summary and plots.

Plots (``grpo_reward.png``: mean reward per GRPO step; ``success.png``: held-out success per method and
environment) are drawn with matplotlib when it is installed; without it the report says so and keeps the
tables (the numbers never depend on matplotlib).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reharness.experiments.r1_stages import R1Result

NOT_RUN = "(not run: see the experiment's options)"


def _num(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def main_table(result: R1Result, transfer: bool = False) -> list[str]:
    envs = result.config.envs
    rows, average = (result.transfer, result.transfer_average) if transfer else (result.rows, result.average)
    lines = [
        "| method | " + " | ".join(f"{env} success [95% CI] (broken)" for env in envs) + " | average |",
        "|---|" + "---|" * (len(envs) + 1),
    ]
    methods = list(dict.fromkeys(r.method for r in rows))
    for method in methods:
        cells = []
        for env in envs:
            row = next(r for r in rows if r.method == method and r.env == env)
            cells.append(f"{_pct(row.success)} [{_pct(row.ci_low)}, {_pct(row.ci_high)}] ({row.broken})")
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {_pct(average[method])} |")
    return lines


def studies(result: R1Result) -> list[str]:
    """The transfer, generalisation and ablation sections."""
    c = result.config
    lines = ["## Transfer to an unseen target", ""]
    if result.transfer:
        lines += [f"Engineers trained against `{c.agent}`, applied to `{c.transfer_agent}`:", ""]
        lines += main_table(result, transfer=True)
    else:
        lines.append(NOT_RUN)
    lines += ["", "## Held-out generalisation (failures → one patch → other test tasks)", ""]
    if result.generalisation:
        lines += [
            f"{c.generalisation_seeds} seeds; the patch is measured on {c.heldout_n} other test tasks.",
            "",
            "| method | mean Δ success (pp) | per seed | valid patches |",
            "|---|---|---|---|",
        ]
        for method, g in result.generalisation.items():
            seeds = ", ".join(f"{100 * d:+.1f}" for d in g["deltas"])
            lines.append(f"| {method} | {100 * g['mean_delta']:+.1f} | {seeds} | {g['valid']}/{g['runs']} |")
    else:
        lines.append(NOT_RUN)
    lines += ["", "## Hook ablation of the GRPO engineer's patches", ""]
    if result.ablation:
        lines += ["| variant | success (%) |", "|---|---|"]
        lines += [f"| {name} | {_pct(value)} |" for name, value in result.ablation.items()]
        if result.hook_effects:
            from reharness.experiments.r1_compare import table

            lines += ["", "Each hook's effect (full patch − patch without it), paired per task:", ""]
            lines += table(result.hook_effects)
    else:
        lines.append(NOT_RUN)
    lines += ["", "## Hint-following probe (does the target do what a hint names?)", ""]
    if result.hint_probe:
        lines += [
            "| env | hinted steps | took the named action | unpatched took it (chance) |",
            "|---|---|---|---|",
        ]
        for env, p in result.hint_probe.items():
            shares = [p["followed_frac"], p["baseline_frac"]]
            cells = " | ".join("—" if v is None else f"{_pct(v)} %" for v in shares)
            lines.append(f"| {env} | {p['hinted_steps']} | {cells} |")
    else:
        lines.append(NOT_RUN)
    return lines


def _plots(result: R1Result, out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(matplotlib is not installed: no plots; `pip install matplotlib`)"]
    lines = []
    curve = (result.training.get("grpo") or {}).get("reward_curve") or []
    if curve:
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.plot(range(1, len(curve) + 1), curve, marker="o")
        ax.set_xlabel("GRPO step")
        ax.set_ylabel("mean reward (Δ_B)")
        ax.set_title("GRPO reward")
        fig.tight_layout()
        fig.savefig(out / "grpo_reward.png", dpi=100)
        plt.close(fig)
        lines.append("![GRPO reward](grpo_reward.png)")
    fig, ax = plt.subplots(figsize=(6, 3))
    methods = list(dict.fromkeys(r.method for r in result.rows))
    width = 0.8 / max(1, len(result.config.envs))
    for i, env in enumerate(result.config.envs):
        rows = [next(r for r in result.rows if r.method == m and r.env == env) for m in methods]
        xs = [j + i * width for j in range(len(methods))]
        errs = [[r.success - r.ci_low for r in rows], [r.ci_high - r.success for r in rows]]
        ax.bar(xs, [r.success for r in rows], width, yerr=errs, label=env, capsize=2)
    ax.set_xticks([j + width * (len(result.config.envs) - 1) / 2 for j in range(len(methods))], methods)
    ax.set_ylabel("held-out success")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "success.png", dpi=100)
    plt.close(fig)
    lines.append("![success per method](success.png)")
    return lines


def _training(result: R1Result) -> list[str]:
    lines = []
    sft: dict[str, Any] = result.training.get("sft") or {}
    grpo: dict[str, Any] = result.training.get("grpo") or {}
    if sft:
        examples = sft.get("examples") or {}
        lines.append(
            f"- SFT: {examples.get('train')} train / {examples.get('valid')} valid examples, "
            f"{sft.get('params')} parameters, final loss {_num(sft.get('final_loss'))}, valid loss "
            f"{_num(sft.get('eval_loss'))}, {sft.get('train_seconds')} s."
        )
    if grpo:
        timing = grpo.get("timing") or {}
        stream = grpo.get("packet_stream") or {}
        packets = f"{grpo.get('packets')} train packets"
        if stream.get("kind") == "contested":
            packets = f"{grpo.get('packets')} contested of {stream.get('train_packets')} train packets"
        variance = grpo.get("variance_frac_curve") or []
        lines.append(
            f"- GRPO: {packets}, reward per step {grpo.get('reward_curve')}, "
            f"valid-patch share per step {grpo.get('valid_frac_curve')}, groups with reward variance "
            f"{sum(v > 0 for v in variance)}/{len(variance)}; {timing.get('seconds_per_step')} s "
            f"per step, {timing.get('rerun_share')} of it in paired reruns."
        )
        for stage, score in (grpo.get("valid") or {}).items():
            change = (
                f"; greedy reply differs from SFT's on {_pct(score['changed'])} % of the packets, "
                f"{score.get('mean_edit_distance')} tokens edited on average"
                if "changed" in score and stage == "grpo"
                else ""
            )
            lines.append(
                f"- valid packets, {stage} engineer (greedy): mean Δ_B {_num(score.get('mean_delta'))}, "
                f"{score.get('valid')}/{score.get('packets')} valid patches{change}."
            )
        lines += _selection(grpo)
    shuffled: dict[str, Any] = result.training.get("grpo-shuffled") or {}
    if shuffled:
        lines.append(
            f"- GRPO on shuffled rewards (control): reward per step {shuffled.get('reward_curve')}"
            + "".join(
                f"; valid packets, {stage} (greedy): mean Δ_B {_num(score.get('mean_delta'))}"
                for stage, score in (shuffled.get("valid") or {}).items()
            )
            + "."
        )
        lines += _selection(shuffled, "GRPO on shuffled rewards")
    return lines or ["- (training loaded from an earlier run)"]


def _selection(info: dict[str, Any], what: str = "GRPO") -> list[str]:
    """The valid curve of a GRPO stage that chose its step on ``valid``."""
    selection = info.get("selection") or {}
    if not selection:
        return []
    lines = [
        "",
        f"{what}: greedy mean Δ_B on the valid packets per step (0 = SFT), and the change of the greedy "
        f"reply from SFT's; kept: step {selection.get('selected_step')}.",
        "",
        "| step | valid mean Δ_B | valid patches | replies changed vs SFT | mean token edit distance |",
        "|---|---|---|---|---|",
    ]
    for c in selection.get("valid_curve") or []:
        lines.append(
            f"| {c['step']} | {_num(c['mean_delta'])} | {c['valid']}/{c['packets']} | "
            f"{_pct(c['changed'])} % | {c['mean_edit_distance']} |"
        )
    return lines + [""]


def _comparisons(result: R1Result) -> list[str]:
    from reharness.experiments.r1_compare import table

    lines = ["## Paired comparisons (same test tasks; an ordering only where the 95% CI excludes 0)", ""]
    lines += table(result.comparisons) if result.comparisons else [NOT_RUN]
    budget = result.controls.get("best_of_n")
    if budget:
        lines += [
            "",
            "Controls: `grpo-shuffled` is GRPO on group-permuted rewards; `placebo` a no-op patch measured "
            "by its rerun (no prefix reuse); `placebo-text` Self-Refine's patch shape with content-free "
            "text; `best-of-n` the teacher's best of "
            f"N = {budget['n']} patches chosen on a train batch ({budget['grpo_reruns']} GRPO reruns / "
            f"{budget['test_packets']} test packets).",
        ]
    return lines


def reply_funnel(result: R1Result) -> list[str]:
    """Per method, what became of its patches before any rerun (Harness-R1 counts the prompted editors'
    parse and validation failures): batches with failures, replies that did not parse, patches refused by the
    checks (by error code), degenerate ones, valid ones and the valid patches' Δ (net flips per task)."""
    lines = [
        "## What became of each method's patches",
        "",
        "| method | batches | did not parse | refused by the checks | degenerate | valid "
        "| Δ of the valid (pp) | refused, by code |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method in dict.fromkeys(r.method for r in result.rows):
        if method == "none":
            continue
        mine = [r for r in result.rows if r.method == method]
        codes = sum((Counter(row.error_codes) for row in mine), Counter[str]())
        tasks, net = sum(r.valid_tasks for r in mine), sum(r.valid_net for r in mine)
        delta = f"{100 * net / tasks:+.1f}" if tasks else "–"
        listed = ", ".join(f"{c} {n}" for c, n in codes.most_common()) or "–"
        lines.append(
            f"| {method} | {sum(r.batches for r in mine)} | {sum(r.parse_failures for r in mine)} | "
            f"{sum(r.validation_failures for r in mine)} | {sum(r.degenerate for r in mine)} | "
            f"{sum(r.valid_patches for r in mine)} | {delta} | {listed} |"
        )
    return lines


def write_report(result: R1Result, out: Path) -> Path:
    c = result.config
    lines = [
        "# Harness-R1 at small scale",
        "",
        f"Target `{c.agent}`, environments {', '.join(c.envs)}; {c.test_batches} held-out test batches of "
        f"{c.batch_size} tasks per environment; each method writes one patch per batch from its failure "
        "packet, measured by paired rerun on the same tasks and seeds (invalid or degenerate ⇒ no patch).",
        "",
        "## Success on held-out batches (%)",
        "",
        *main_table(result),
        "",
        "| method | valid patches | valid on the first sample | rescued | broken |",
        "|---|---|---|---|---|",
    ]
    for method in dict.fromkeys(r.method for r in result.rows):
        mine = [r for r in result.rows if r.method == method]
        batches = sum(r.batches for r in mine)
        lines.append(
            f"| {method} | {sum(r.valid_patches for r in mine)}/{batches} | "
            f"{sum(r.first_sample_valid for r in mine)}/{batches} | "
            f"{sum(r.rescued for r in mine)} | {sum(r.broken for r in mine)} |"
        )
    lines += ["", *reply_funnel(result), "", *_comparisons(result)]
    lines += [
        "",
        "## Training",
        "",
        *_training(result),
        "",
        "## Plots",
        "",
        *_plots(result, out),
    ]
    lines += ["", *studies(result), ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path

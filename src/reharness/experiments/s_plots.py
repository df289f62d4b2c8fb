"""The plots of ``reharness experiment s``'s report (matplotlib, the ``experiments`` extra).

- ``success_vs_rollouts.png``: per env, each method's H0 success of its training rollouts (sampled, per
  step) against the rollouts spent so far, and the held-out greedy success of the final policy (a marker at
  its total rollouts; ``start`` at 0);
- ``rescue_rate.png``: per env, the cumulative rescue rate (groups rescued / groups tried) per sibling over
  the training steps of ``router`` and ``random`` (and ``resample``'s H0 re-sampling, for comparison);
- ``profile_drift.png``: per env, each sibling's profile rescue rate at step 0 (the pool's profile) and at
  each re-anchoring of the ``router`` run;
- ``behaviour.png``: the behaviour rates in H0 on the test tasks, ``start`` against each trained policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from reharness.experiments.s_data import drift, metrics, sibling_names

if TYPE_CHECKING:
    from reharness.experiments.s_config import SResult


def _success_vs_rollouts(result: SResult, out: Path, plt: Any) -> str:
    envs = result.config.envs
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.5), squeeze=False)
    for ax, env in zip(axes[0], envs, strict=True):
        for i, row in enumerate(r for r in result.rows if r.env == env):
            colour = f"C{i}"
            if row.method != "start" and not row.alias:
                lines = [m for m in metrics(out, env, row.method) if "groups" in m]
                spent, xs, ys = 0, [], []
                for m in lines:
                    spent += int(m.get("rollouts", 0))
                    xs.append(spent)
                    ys.append(float(m.get("h0_success", 0.0)))
                ax.plot(xs, ys, color=colour, alpha=0.6, label=f"{row.method} (train, sampled)")
            ax.scatter(
                [row.rollouts], [row.success], color=colour, marker="*", s=90, label=f"{row.method} (test)"
            )
        ax.set_title(env)
        ax.set_xlabel("training rollouts spent")
        ax.set_ylabel("H0 success")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "success_vs_rollouts.png", dpi=100)
    plt.close(fig)
    return "![H0 success vs rollouts](success_vs_rollouts.png)"


def _rescue_rate(result: SResult, out: Path, plt: Any) -> str | None:
    envs = result.config.envs
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.5), squeeze=False)
    drawn = False
    for ax, env in zip(axes[0], envs, strict=True):
        for method in ("router", "random", "resample"):
            summary = result.training.get(env, {}).get(method)
            if summary is None or summary.get("alias"):
                continue
            totals: dict[str, list[int]] = {}
            series: dict[str, tuple[list[int], list[float]]] = {}
            for m in metrics(out, env, method):
                if "groups" not in m:
                    continue
                for name, cell in (m.get("per_sibling") or {}).items():
                    tried, won = totals.setdefault(name, [0, 0])
                    totals[name] = [tried + int(cell["tried"]), won + int(cell["succeeded"])]
                    xs, ys = series.setdefault(name, ([], []))
                    xs.append(int(m["step"]))
                    ys.append(totals[name][1] / max(1, totals[name][0]))
            for name, (xs, ys) in series.items():
                ax.plot(xs, ys, marker="o", label=f"{method}: {name}")
                drawn = True
        ax.set_title(env)
        ax.set_xlabel("training step")
        ax.set_ylabel("rescue rate (cumulative)")
        ax.set_ylim(-0.02, 1.02)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    if drawn:
        fig.tight_layout()
        fig.savefig(out / "rescue_rate.png", dpi=100)
    plt.close(fig)
    return "![rescue rate per sibling](rescue_rate.png)" if drawn else None


def _profile_drift(result: SResult, out: Path, plt: Any) -> str | None:
    envs = result.config.envs
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.5), squeeze=False)
    drawn = False
    for ax, env in zip(axes[0], envs, strict=True):
        router = result.training.get(env, {}).get("router")
        if router is None or router.get("alias"):
            continue
        pool_dir = result.config.pool_for(env)
        points = drift(pool_dir, out / env / "router")
        names = sibling_names(pool_dir)
        # lines join the anchors measured like the last one; an anchor measured another way (a greedy pool
        # profile before sampled re-anchors) is drawn apart, unjoined
        way = (points[-1]["temperature"], points[-1]["samples"]) if points else None
        joined = [p for p in points if (p["temperature"], p["samples"]) == way]
        apart = [p for p in points if (p["temperature"], p["samples"]) != way]
        sids = list(dict.fromkeys(s for p in points for s in p["rates"]))
        for sid in sids:
            xs = [p["step"] for p in joined if sid in p["rates"]]
            ys = [p["rates"][sid] for p in joined if sid in p["rates"]]
            (line,) = ax.plot(xs, ys, marker="o", label=names.get(sid, sid[:8]))
            for p in apart:
                if sid in p["rates"]:
                    ax.plot([p["step"]], [p["rates"][sid]], marker="o", mfc="none", color=line.get_color())
            drawn = drawn or len(xs) > 1
        h0 = [(p["step"], p["h0_success"]) for p in joined if p["h0_success"] is not None]
        if h0:
            ax.plot([s for s, _ in h0], [v for _, v in h0], "k--", marker="x", label="H0 success (valid)")
        ax.set_title(env)
        apart_note = f"; hollow: {apart[0]['label']}" if apart else ""
        ax.set_xlabel(f"training step of the anchor{apart_note}", fontsize=7)
        ax.set_ylabel("profile rescue rate")
        ax.set_ylim(-0.02, 1.02)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    if drawn:
        fig.tight_layout()
        fig.savefig(out / "profile_drift.png", dpi=100)
    plt.close(fig)
    return "![profile drift](profile_drift.png)" if drawn else None


def _behaviour(result: SResult, out: Path, plt: Any) -> str | None:
    keys = ("invalid_action/step", "repeated_action/step", "format_error/step", "premature_answer/episode")
    envs = [e for e in result.config.envs if result.behaviour.get(e)]
    if not envs:
        return None
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.5), squeeze=False)
    for ax, env in zip(axes[0], envs, strict=True):
        methods = list(result.behaviour[env])
        width = 0.8 / max(1, len(methods))
        for i, method in enumerate(methods):
            rates = result.behaviour[env][method]
            xs = [j + i * width for j in range(len(keys))]
            ax.bar(xs, [rates.get(k, 0.0) for k in keys], width, label=method)
        ax.set_xticks([j + width * (len(methods) - 1) / 2 for j in range(len(keys))])
        ax.set_xticklabels([k.replace("/", "\n/") for k in keys], fontsize=7)
        ax.set_title(env)
        ax.set_ylabel("rate in H0 (test)")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "behaviour.png", dpi=100)
    plt.close(fig)
    return "![behaviour rates](behaviour.png)"


def draw_plots(result: SResult, out: Path) -> list[str]:
    """Draw every plot into ``out``; the Markdown lines that show them (or why there are none)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(matplotlib is not installed: no plots; `pip install 'reharness[experiments]'`)"]
    lines = [_success_vs_rollouts(result, out, plt)]
    for draw, missing in (
        (_rescue_rate, "(no rescue attempts: no rescue-rate plot)"),
        (_profile_drift, "(no re-anchoring: no profile-drift plot)"),
        (_behaviour, "(no evaluation: no behaviour plot)"),
    ):
        lines.append(draw(result, out, plt) or missing)
    return lines

"""SmolLM2-135M-Instruct as Harness-R1's prompted editor in every way it can be asked (issue 36), on the
18 test packets of the final Harness-R1 runs: repair programs with and without the grammar constraint, and
free hook code from Harness-R1's full prompt and from the compact one.

Usage: python docs/results/smollm2/editor_variants.py R1_CONFIG OUT [VARIANT ...]
  R1_CONFIG  the r1_config.json of the run whose packets to use (docs/results/r1-i38/s2/r1_config.json)
  OUT        a directory; one folder per variant (its eval.jsonl), the targets' runs shared in OUT/runs,
             and OUT/variants.json (the reply funnel per variant and environment)
  VARIANT    program-constrained (the stored row's settings), program-free, hooks-full, hooks-compact

It reuses the experiment's own evaluator (``reharness.experiments.r1_eval.Evaluator``) with only the prompted
row, so the packets, seeds, sampling (one reply per packet at the run's temperature, never resampled) and
paired reruns are those of `experiment r1`; only how the editor is asked changes (`--editor-language`,
`--editor-constrain`, `--editor-prompt`). Resumable: each variant's eval.jsonl keeps the packets done.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from reharness.experiments.r1_eval import Evaluator
from reharness.experiments.r1_stages import EVAL_FILE, PROMPTED, R1Config, aggregate

VARIANTS: dict[str, dict] = {
    "program-constrained": {"editor_language": "program", "editor_constrain": True},
    "program-free": {"editor_language": "program", "editor_constrain": False},
    "hooks-full": {"editor_language": "hooks", "editor_constrain": False},
    "hooks-compact": {"editor_language": "hooks", "editor_constrain": False, "editor_prompt": "compact"},
}
#: what became of each reply, per environment (the fields of the experiment's own reply funnel)
FUNNEL = {"batches", "parse_failures", "validation_failures", "degenerate", "valid_patches", "error_codes"}
FUNNEL |= {"valid_tasks", "valid_net", "rescued", "broken"}


async def evaluate(config: R1Config, variant: str) -> list[dict]:
    notify = lambda text: print(f"[{variant}] {text}", flush=True)  # noqa: E731
    return await Evaluator(config, None, notify=notify, methods=(PROMPTED,)).run()


def main(config_path: Path, out: Path, variants: list[str]) -> None:
    base = json.loads(config_path.read_text())
    (out / "runs").mkdir(parents=True, exist_ok=True)
    summary_path = out / "variants.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    for variant in variants:
        folder = out / variant
        folder.mkdir(exist_ok=True)
        if not (folder / "runs").exists():  # the target's baselines and reruns are shared by the variants
            (folder / "runs").symlink_to((out / "runs").resolve())
        config = R1Config.model_validate(base | VARIANTS[variant] | {"out": str(folder)})
        asyncio.run(evaluate(config, variant))
        records = [json.loads(line) for line in (folder / EVAL_FILE).read_text().splitlines()]
        rows, _ = aggregate(config, records, methods=(PROMPTED,))
        summary[variant] = {row.env: row.model_dump(include=FUNNEL) for row in rows}
        print(json.dumps({variant: summary[variant]}, indent=1), flush=True)
        summary_path.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    chosen = sys.argv[3:] or list(VARIANTS)
    unknown = sorted(set(chosen) - set(VARIANTS))
    if unknown:
        sys.exit(f"unknown variant(s) {unknown}; choose from {sorted(VARIANTS)}")
    main(Path(sys.argv[1]), Path(sys.argv[2]), chosen)

"""Scripted studies that reproduce the shape of the papers' tables at small scale (layer ``experiments``).

- :mod:`.r1`: Harness-R1's main table — no patch, Self-Refine, the operators teacher, the SFT-only engineer
  and the GRPO engineer on held-out (test-split) batches of a frozen target (``reharness experiment r1``);
- :mod:`.r1_stages`: its stages: validated config, result rows, training, aggregation;
- :mod:`.r1_eval`: its held-out evaluation (test batches × methods, resumable records);
- :mod:`.r1_controls`: its control rows (GRPO on shuffled rewards, a placebo patch, matched-budget best-of-N);
- :mod:`.r1_compare`: paired comparisons of its methods with bootstrap intervals;
- :mod:`.r1_coevolution`: co-evolution — r1 runs of a start target and of a trained one, compared per task;
- :mod:`.r1_probe`: its hint-following probe: do the frozen targets take an action a hint names?
- :mod:`.r1_studies`: its further studies, on the trained engineers;
- :mod:`.r1_report`: its Markdown report: main table, training summary and plots;
- :mod:`.s`: Harness-S's claim — policy GRPO with sibling rescue (router, vote) against policy-only GRPO,
  equal-compute H0 resampling, a random sibling and a placebo sibling, evaluated in H0 on held-out tasks,
  plus Rank-1 (``reharness experiment s``);
- :mod:`.s_config`: its validated options (:class:`SConfig`), result rows and the ``--json`` contract;
- :mod:`.s_eval`: its held-out evaluation and the aggregation into rows;
- :mod:`.s_data`: what its report reads from the training runs: step metrics, diagnostic, profile drift,
  oracle agreement, learnable rescues, the pool's cost;
- :mod:`.s_plots`: its report's plots (matplotlib, the ``experiments`` extra);
- :mod:`.s_report`: its Markdown report (``OUT/report.md``): tables, diagnostic and plots;
- :mod:`.s_evidence`: the report's evidence sections: paired comparisons, targeted failure codes, compute,
  router vs oracle, learnable rescues;
- :mod:`.s_seeds`: several training seeds' runs in one table, from their stored files
  (``reharness experiment s-seeds``);
- :mod:`.s_compare`: one arm of two stored runs (an ablation) paired on their shared test tasks
  (``reharness experiment s-compare``).
"""

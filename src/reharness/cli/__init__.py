"""Command-line interface: the ``reharness`` command (typer), one module per command group.

- :mod:`.main`: the ``reharness`` typer app, joining every command group;
- :mod:`.common`: shared helpers: consoles, the one error boundary (user error → exit 2 with its hint),
  typed option validators;
- :mod:`.infra`: what the CLI says about infrastructure errors (episodes the model server or env ended);
- :mod:`.progress`: progress of long commands: a rich bar per batch and a line per stage, on stderr;
- :mod:`.scale`: the executor options of the commands that run episodes (``--executor local|ray``, ...);
- :mod:`.run_cmd`: ``reharness run``: a batch of episodes with a progress bar, then a summary;
- :mod:`.pool_route`: ``run --pool POOL --route rank1|oracle``: the per-task harness route of a routed run;
- :mod:`.show_cmd`: ``reharness show`` and ``reharness export``: read a finished (or partial) run;
- :mod:`.packet_cmd`: ``reharness packet``: a finished run's failure packet, as prompt text or JSON;
- :mod:`.patch_cmd`: ``reharness patch check|try``: validate a patch, run one hook in the sandbox;
- :mod:`.improve_cmd`: ``reharness improve`` (the Harness-R1 loop) and ``reharness demo``;
- :mod:`.agent_cmd`: ``reharness agent``: train, list and evaluate the built-in tiny target agents;
- :mod:`.train_cmd`: ``reharness train engineer``: packets, cold-start SFT and GRPO of the engineer;
- :mod:`.train_policy_cmd`: ``reharness train policy``: policy GRPO in H0 with sibling rescue;
- :mod:`.train_launch`: ``--dry-run`` and ``--accelerate-config`` of the training commands;
- :mod:`.pool_cmd`: ``reharness pool``: inspect a frozen sibling pool (``pool show``);
- :mod:`.pool_build_cmd`: ``reharness pool build``: freeze a pool of siblings the user names;
- :mod:`.pool_evolve_cmd`: ``reharness pool evolve``: build a pool by directional evolution;
- :mod:`.experiment_cmd`: ``reharness experiment r1|s``: the papers' tables at small scale.
"""

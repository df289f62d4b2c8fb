"""AppWorld-like ``apps``: simulated apps over per-episode SQLite, agent code in a confined interpreter.

Kit: :mod:`.kit` (the ``apps`` :class:`~reharness.envs.EnvKit`), ``harness.yaml`` (the base harness
H0) and ``harness-fc.yaml`` (its function-calling variant, ``fc``).

- :mod:`.env`: the gymnasium env (``reharness/Apps-v0``) and :func:`run_metrics`;
- :mod:`.world`: one task's simulated world: ~100 people, the supervisor, every app's SQLite tables;
- :mod:`.server`: the host-side app server: API specs, validation, access tokens, pagination, dispatch;
- :mod:`.handlers`: the apps' APIs (supervisor, api_docs, notes, todo, …), registered with their specs;
- :mod:`.handlers_comm`: the communication and money apps' APIs: payments, email, contacts, calendar, files;
- :mod:`.drafts`: building blocks of scenarios: :class:`Draft`, the ground-truth programs' prelude, lookups;
- :mod:`.scenarios`: task scenarios: world setup, instruction, gold and a ground-truth program;
- :mod:`.scenarios_more`: more scenario templates (a three-app note, files, to-dos and an email);
- :mod:`.generator`: seeded tasks: three variants per scenario, splits decided per scenario;
- :mod:`.grading`: AppWorld-style tests over the database diff between an episode's start and end;
- :mod:`.protocol`: what the agent reads and writes: task prompt, code extraction, tool spec, observations;
- :mod:`.evidence`: failure evidence read from observations: API, auth and code errors, collateral damage;
- :mod:`.failures`: the failure detectors built on that evidence;
- :mod:`.operators`: repair operators: API-doc lookup, login before use, pagination;
- :mod:`.tiny`: the tiny-agent recipe: replies are whole programs, episodes two to four turns.
"""

from reharness.kits.apps.env import AppsEnv, run_metrics

__all__ = ["AppsEnv", "run_metrics"]

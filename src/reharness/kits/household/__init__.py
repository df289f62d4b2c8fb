"""ALFWorld-like household environment (``reharness/Household-v0``): rooms, receptacles, six task types.

Kit: :mod:`.kit` (the ``household`` :class:`~reharness.envs.EnvKit`, Harness-R1's ``alfworld``),
``harness.yaml`` (the base harness H0).

- :mod:`.env`: the gymnasium env: an ALFWorld-like text household with admissible commands;
- :mod:`.catalog`: static world knowledge: receptacle kinds, object kinds and room layouts;
- :mod:`.world`: the mutable world state of one episode and the ALFWorld-style text that describes it;
- :mod:`.commands`: the command grammar (ALFWorld's older one): normalisation and the admissible list;
- :mod:`.dynamics`: the effects and feedback text of commands;
- :mod:`.goals`: task goals: the goal record, ALFWorld-style instructions and the goal test;
- :mod:`.generator`: the seeded task generator;
- :mod:`.expert`: the goal planner and the privileged expert built on it;
- :mod:`.explore`: the exploring expert, which acts only on what the agent has observed;
- :mod:`.failures`: runtime signals and leakage facts ("Nothing happens." answers, numbered instances);
- :mod:`.r1`: Harness-R1's ALFWorld ``ctx`` adapter, from observations and executed actions;
- :mod:`.thoughts`: short ``Think:`` lines for solver demonstrations;
- :mod:`.tiny`: the tiny-agent recipe: recipes, perturbations and thoughts.
"""

from reharness.kits.household.env import HouseholdEnv

__all__ = ["HouseholdEnv"]

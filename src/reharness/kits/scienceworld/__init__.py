"""ScienceWorld: 30 elementary-science tasks (package ``scienceworld``, a JAR through py4j; needs Java).

Kit: :mod:`.kit` (the ``scienceworld`` kit), ``harness.yaml`` (the base harness) and ``harness-valid.yaml``
(valid action–object combinations shown).

- :mod:`.variations`: the official variation splits, stored (checked against the JAR by a test);
- :mod:`.jvm`: the kit's own JVM, started with fixed identity hashes so trajectories do not depend on history;
- :mod:`.env`: the environment: direct JAR calls for speed, canonical observations, gold-path solver;
- :mod:`.failures`: detectors: numbered menus answered with a command, a wrong ``focus on``, loops;
- :mod:`.operators`: repairs: answer menus with a number, guard ``focus on``;
- :mod:`.r1`: Harness-R1's ALFWorld-shaped ``ctx`` read from ScienceWorld's text.
"""

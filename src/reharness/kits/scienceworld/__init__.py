"""ScienceWorld kit: ``scienceworld`` (package ``scienceworld``, a JAR run through py4j; needs Java).

Modules: :mod:`.variations` (the official variation splits), :mod:`.env` (the environment: direct JAR calls
for speed, canonical observations, gold-path solver, Harness-R1 ctx fields).
"""

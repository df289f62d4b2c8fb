"""The confined worker-process core shared by every sandbox (patch hooks, agent code).

Low-level and layer-neutral, so both ``patches`` (hook workers) and ``envs`` (the ``apps`` interpreter) can
use it: spawning and killing workers (:mod:`.process`), deadline-bounded pipe I/O (:mod:`.channel`), strict
framing (:mod:`.frames`), the kernel confinement a worker applies to itself (:mod:`.confine`), the helpers of
the standalone worker scripts (:mod:`.workerlib`) and the persistent code interpreter
(:mod:`.interpreter` host side, ``interp_worker.py`` worker side).
"""

"""The confined worker-process core shared by every sandbox (patch hooks, agent code).

Low-level and layer-neutral, so both ``patches`` (hook workers) and the kits (an environment's code
interpreter) can use it:

- :mod:`.process`: spawning, killing and accounting for worker processes (L2 spawn, L5 lifecycle);
- :mod:`.channel`: deadline-bounded I/O on a worker's pipes, blocking and asyncio (part of L5);
- :mod:`.frames`: parent-side framing and strict decoding of what a worker sends back (part of L5);
- :mod:`.confine`: the kernel confinement a worker applies to itself (L3), each layer probed and reported;
- :mod:`.workerlib`: helpers shared by the standalone worker scripts (hook worker, code interpreter);
- :mod:`.interpreter`: the persistent confined Python interpreter for untrusted code, host side;
- :mod:`.interp_worker`: that interpreter's worker side.
"""

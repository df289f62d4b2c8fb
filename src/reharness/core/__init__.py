"""Core (the lowest layer): the chat types, errors, hashing and sandbox confinement every other layer shares.

- :mod:`.types`: chat-level types: messages, tool calls, sampling parameters, chat requests and responses;
- :mod:`.agent`: the agent (policy) interface: anything that answers a chat request with text or tool calls;
- :mod:`.errors`: typed errors with stable codes, each saying what was wrong and how to fix it;
- :mod:`.hashing`: canonical JSON and stable hashes;
- :mod:`.aio`: bounded concurrency for independent async jobs;
- :mod:`.resume`: resuming a run only with the options it was started with;
- :mod:`.registry`: the one name -> entry registry mechanism, with did-you-mean errors;
- :mod:`.jsonl`: the one resumable JSON-lines reader (a torn last line dropped, damage named);
- :mod:`.env_protocol`: the environment protocol every layer types against (``TextEnvLike``);
- :mod:`.secrets`: secret redaction, applied wherever text leaves the process;
- :mod:`.sandbox`: the confined worker-process core shared by every sandbox (patch hooks, agent code).
"""

"""Runtime signals of one episode, derived from its trajectory only (Harness-R1's per-trace counters).

Failure packets show these next to each trace so the engineer sees *how* an episode failed in numbers
(REFERENCE.md §1). Every episode gets the common signals; an environment's kit adds its own
(``EnvKit.signals``: searches and clicks, SQL counts and errors, edits and test runs …). Keys are stable;
values are ints except ``score``.

Common: ``turns`` (decisions), ``actions`` (actions the env executed), ``invalid_actions``,
``format_errors``, ``tool_errors``, ``repeated_actions`` (executed actions equal to the previous executed
one), ``repeated_observations`` (steps whose observation was already seen), ``blocked`` / ``forced`` /
``rewritten`` (hook interventions), ``hook_errors``, ``step_limit_hit`` (0/1), ``score``.
"""

from __future__ import annotations

from reharness.core.errors import DataError
from reharness.envs.registry import find_kit
from reharness.failures.evidence import BAD_TOOL_CALL, action_key, executed, stale_steps
from reharness.store.records import EpisodeRecord

Signals = dict[str, int | float]


def signals(record: EpisodeRecord) -> Signals:
    """The runtime signals of ``record`` (see the module docstring), keys sorted."""
    steps = record.steps
    done = [s for s in steps if executed(s)]
    keys = [action_key(record.env, s.action or "") for s in done]
    unparsed = [s for s in steps if "format_error" in s.flags]
    tool_errors = sum((s.parse_error or "").startswith(BAD_TOOL_CALL) for s in unparsed)
    out: Signals = {
        "turns": len(steps),
        "actions": len(done),
        "invalid_actions": _count(record, "invalid_action"),
        "format_errors": len(unparsed) - tool_errors,
        "tool_errors": tool_errors,
        "repeated_actions": sum(a == b for a, b in zip(keys, keys[1:], strict=False)),
        "repeated_observations": sum(stale_steps(record)),
        "blocked": _count(record, "blocked"),
        "forced": _count(record, "forced"),
        "rewritten": _count(record, "rewritten"),
        "hook_errors": sum(len(s.hook_errors) for s in steps),
        "step_limit_hit": int(record.termination == "step_limit"),
        "score": float(record.score),
    }
    kit = find_kit(record.env)
    if kit is not None and kit.signals is not None:
        try:
            out.update(kit.signals(record))
        except Exception as exc:
            raise DataError(
                f"kit {kit.name!r}: signals raised {type(exc).__name__}: {exc}",
                hint=f"fix the signals function of the kit ({kit.source})",
            ) from exc
    return dict(sorted(out.items()))


def _count(record: EpisodeRecord, flag: str) -> int:
    return sum(flag in s.flags for s in record.steps)

"""Short ``Think:`` lines for solver demonstrations: a running summary of what the agent has observed.

Every base harness lets the model think on a ``Think:`` line before its ``Action:`` line. A tiny model trained
from scratch fails to retrieve the task and the search history from far back in a long episode (measured:
45% teacher-forced action accuracy on household after 4M tokens, 0% success). A thought that restates the goal
and the observed state turns that long-range retrieval into local copy-and-update: each turn's thought copies
the previous one and edits it with the latest observation, and the action follows from the thought.

Thoughts use only what the agent has seen (``task_fields`` derived from the instruction and ``runtime_state``,
which lists observed facts only), never hidden state, so they are learnable and an LLM could write them.
"""

from __future__ import annotations

from reharness.core.env_protocol import TextEnvLike


def household_thought(env: TextEnvLike) -> str:
    """``goal … . have … . seen … . searched … .`` from the household's observed state."""
    from reharness.kits.household.catalog import is_openable, kind_of

    task, state = env.task_fields(), env.runtime_state()
    target = task["target_type"]
    if task["lamp_type"]:
        goal = f"look at {target} under {task['lamp_type']}"
    else:
        count = "two " if task["required_count"] == 2 else ""
        condition = f"{task['required_state']} " if task["required_state"] else ""
        goal = f"{count}{condition}{target} in {task['destination_type']}"
    held = state["inventory"][0] if state["inventory"] else None
    have = "nothing"
    if held is not None:
        conditions = state["object_states"].get(held, [])
        have = held + (f" ({', '.join(conditions)})" if conditions else "")
    wanted = {target, task["lamp_type"]} - {None}
    seen = [
        f"{obj} at {at}" for obj, at in state["object_at"].items() if kind_of(obj) in wanted and obj != held
    ]
    opened = set(state["open_receptacles"])
    searched = [r for r in state["visited"] if r in opened or not is_openable(r)]
    parts = [f"goal {goal}", f"have {have}"]
    if task["destination_type"] and task["required_count"] > 1:
        parts.append(f"placed {state['placed_count']} of {task['required_count']}")
    parts.append("seen " + (", ".join(seen) if seen else "none"))
    parts.append("searched " + (", ".join(searched) if searched else "none"))
    return ". ".join(parts) + "."

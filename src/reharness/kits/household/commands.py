"""The household command grammar (ALFWorld's older grammar): normalisation and the admissible list.

Canonical commands are exactly those ALFWorld lists as admissible, including the literal ``in/on`` of
``put mug 1 in/on countertop 1``. Agents may also write ``put mug 1 in countertop 1`` or ``... on ...``,
any letter case, extra spaces or a final period; :func:`normalise` maps all of these onto the canonical form,
and a command is valid exactly when its canonical form is admissible in the current state.
"""

from __future__ import annotations

import re

from reharness.kits.household.catalog import (
    STATE_APPLIANCE,
    can_take_state,
    is_lamp,
    is_openable,
    is_pickupable,
    kind_of,
)
from reharness.kits.household.world import World

_PUT = re.compile(r"^put (.+?) (?:in/on|in|on) (.+)$")
_DIGITS = re.compile(r"(\d+)")


def normalise(command: str) -> str:
    """Canonical spelling of ``command`` (lower case, single spaces, no final period, ``put … in/on …``)."""
    text = " ".join(command.strip().lower().split()).rstrip(".").strip()
    match = _PUT.match(text)
    if match:
        return f"put {match.group(1)} in/on {match.group(2)}"
    return text


def command_key(command: str) -> tuple[str | int, ...]:
    """Sort key that orders ``go to cabinet 2`` before ``go to cabinet 10``."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(command))


def admissible(world: World) -> list[str]:
    """Every command that does something in the current state, sorted deterministically."""
    here = world.location
    commands = ["inventory", "look"]
    commands += [f"go to {r}" for r in world.receptacles if r != here]
    held = world.held
    if held is not None:
        commands.append(f"examine {held}")
    if here is not None:
        commands.append(f"examine {here}")
        if is_openable(here):
            commands.append(f"close {here}" if world.is_open[here] else f"open {here}")
        for obj in world.visible():
            commands.append(f"examine {obj}")
            if is_lamp(obj):
                commands.append(f"use {obj}")
            elif held is None and is_pickupable(obj):
                commands.append(f"take {obj} from {here}")
        if held is not None:
            if world.accessible(here):
                commands.append(f"put {held} in/on {here}")
            for state, (appliance, verb) in STATE_APPLIANCE.items():
                if kind_of(here) == appliance and can_take_state(held, state):
                    commands.append(f"{verb} {held} with {here}")
    return sorted(commands, key=command_key)

"""Harness-R1's ALFWorld ``ctx`` for the TextWorldExpress games (:class:`~reharness.kits.text_games.
TextGameAdapter`): the room is named by ``You are in the kitchen.``, the rooms beyond the exits by ``To the
north you see the hallway.``, and an unknown command is answered ``Unknown action`` (ALFWorld: ``Nothing
happens.``)."""

from __future__ import annotations

import re

from reharness.kits.text_games import TextGameAdapter


class TwxAdapter(TextGameAdapter):
    """ALFWorld's ctx shape for a TextWorldExpress game."""

    room_pattern = re.compile(r"you are in the ([a-z -]+)\.")
    exit_pattern = re.compile(r"to the (?:north|south|east|west) you see the ([a-z -]+)\.")
    inventory_prefix = "inventory"
    invalid_markers = ("unknown action", "no known action matches", "nothing happens")

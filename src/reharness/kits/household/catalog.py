"""Static world knowledge of the household environment: receptacle kinds, object kinds and room layouts.

The vocabulary follows ALFWorld (AI2-THOR object and receptacle types, lower-case, no spaces): openable
containers start closed, surfaces are always accessible, objects have a few "homes" (receptacle types where
they plausibly start) and the properties that decide which task types they can appear in (``clean`` at a
sinkbasin, ``hot`` in a microwave, ``cool`` in a fridge). Keeping this as plain data makes the generator and
the dynamics independent of any particular room.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Receptacle types that open and close (closed at the start of every episode).
OPENABLE: frozenset[str] = frozenset({"cabinet", "drawer", "fridge", "microwave", "safe"})

#: How often a task's target starts stored away in a closed container of its homes (generic prior knowledge:
#: "things are usually put away"); the generator draws with it and the exploring expert searches by it.
STORED_AWAY_BIAS = 0.6

#: Togglable light sources (objects that stay where they are and can be ``use``d).
LAMPS: tuple[str, ...] = ("desklamp", "floorlamp")

#: Object state -> (appliance receptacle type, command verb, adjective used in instructions).
STATE_APPLIANCE: dict[str, tuple[str, str]] = {
    "clean": ("sinkbasin", "clean"),
    "hot": ("microwave", "heat"),
    "cool": ("fridge", "cool"),
}

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)

#: Task type -> object state the target must have when placed (``None``: no state).
TASK_STATE: dict[str, str | None] = {
    "pick_and_place_simple": None,
    "look_at_obj_in_light": None,
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "hot",
    "pick_cool_then_place_in_recep": "cool",
    "pick_two_obj_and_place": None,
}


def _words(text: str) -> tuple[str, ...]:
    """Split a whitespace-separated list of type names (keeps long vocabularies readable)."""
    return tuple(text.split())


@dataclass(frozen=True)
class ObjectKind:
    """Where an object type may start (receptacle types) and which states it can take."""

    homes: tuple[str, ...]
    props: frozenset[str] = frozenset()
    pickupable: bool = True


_FOOD = ("countertop", "diningtable", "fridge", "sinkbasin", "garbagecan", "microwave")
_DISH = (
    "cabinet",
    "countertop",
    "diningtable",
    "sinkbasin",
    "fridge",
    "microwave",
    "shelf",
    "desk",
    "sidetable",
)
_CUTLERY = ("countertop", "drawer", "diningtable", "sinkbasin")
_SMALL = ("drawer", "sidetable", "coffeetable", "shelf", "safe", "dresser", "desk", "sofa", "armchair", "bed")
_DECOR = ("shelf", "coffeetable", "sidetable", "dresser", "diningtable", "tvstand", "cabinet", "safe")
_BATH = ("toilet", "countertop", "cabinet", "shelf", "garbagecan")
_LAMP = ("sidetable", "desk", "dresser")
_ALL3 = frozenset({"clean", "hot", "cool"})

OBJECTS: dict[str, ObjectKind] = {
    # kitchen: food
    "apple": ObjectKind(_FOOD, _ALL3),
    "bread": ObjectKind(("countertop", "diningtable", "fridge", "microwave"), frozenset({"hot", "cool"})),
    "egg": ObjectKind(_FOOD, frozenset({"hot", "cool"})),
    "lettuce": ObjectKind(("countertop", "diningtable", "fridge", "sinkbasin"), frozenset({"clean", "cool"})),
    "potato": ObjectKind(_FOOD, _ALL3),
    "tomato": ObjectKind(_FOOD, _ALL3),
    # kitchen: dishes and tools
    "mug": ObjectKind(_DISH + ("coffeemachine",), _ALL3),
    "cup": ObjectKind(_DISH, _ALL3),
    "bowl": ObjectKind(_DISH, _ALL3),
    "plate": ObjectKind(_DISH + ("coffeetable",), _ALL3),
    "pan": ObjectKind(
        ("countertop", "stoveburner", "cabinet", "diningtable", "sinkbasin", "fridge"), _ALL3 - {"hot"}
    ),
    "pot": ObjectKind(
        ("countertop", "stoveburner", "cabinet", "diningtable", "sinkbasin", "fridge"), _ALL3 - {"hot"}
    ),
    "kettle": ObjectKind(("stoveburner", "countertop", "cabinet", "diningtable"), frozenset({"clean"})),
    "fork": ObjectKind(_CUTLERY, frozenset({"clean"})),
    "spoon": ObjectKind(_CUTLERY, frozenset({"clean"})),
    "knife": ObjectKind(_CUTLERY, frozenset({"clean"})),
    "butterknife": ObjectKind(_CUTLERY, frozenset({"clean"})),
    "spatula": ObjectKind(_CUTLERY, frozenset({"clean"})),
    "ladle": ObjectKind(_CUTLERY, frozenset({"clean"})),
    "saltshaker": ObjectKind(("countertop", "cabinet", "diningtable", "shelf", "drawer")),
    "peppershaker": ObjectKind(("countertop", "cabinet", "diningtable", "shelf", "drawer")),
    "winebottle": ObjectKind(
        ("countertop", "cabinet", "diningtable", "fridge", "shelf"), frozenset({"cool"})
    ),
    "dishsponge": ObjectKind(
        ("countertop", "sinkbasin", "cabinet", "drawer", "diningtable", "bathtubbasin", "toilet"),
        frozenset({"clean"}),
    ),
    # living room / bedroom
    "remotecontrol": ObjectKind(
        ("sofa", "armchair", "coffeetable", "sidetable", "tvstand", "drawer", "dresser")
    ),
    "keychain": ObjectKind(_SMALL),
    "creditcard": ObjectKind(_SMALL),
    "cellphone": ObjectKind(_SMALL),
    "watch": ObjectKind(("sidetable", "coffeetable", "drawer", "safe", "dresser", "shelf", "desk")),
    "newspaper": ObjectKind(
        ("sofa", "armchair", "coffeetable", "sidetable", "diningtable", "ottoman", "garbagecan")
    ),
    "pillow": ObjectKind(("sofa", "armchair", "ottoman", "bed")),
    "box": ObjectKind(("coffeetable", "sidetable", "diningtable", "shelf", "tvstand", "dresser", "cabinet")),
    "laptop": ObjectKind(("sofa", "armchair", "coffeetable", "diningtable", "ottoman", "bed", "desk")),
    "book": ObjectKind(("bed", "desk", "sidetable", "shelf", "drawer", "dresser", "coffeetable", "sofa")),
    "statue": ObjectKind(_DECOR),
    "vase": ObjectKind(_DECOR),
    "tissuebox": ObjectKind(
        ("sidetable", "coffeetable", "shelf", "dresser", "tvstand", "toilet", "countertop")
    ),
    "houseplant": ObjectKind(("sidetable", "coffeetable", "diningtable", "shelf")),
    "alarmclock": ObjectKind(("desk", "sidetable", "shelf", "dresser")),
    "cd": ObjectKind(("desk", "drawer", "shelf", "sidetable", "safe", "garbagecan")),
    "pen": ObjectKind(("desk", "drawer", "shelf", "sidetable", "dresser")),
    "pencil": ObjectKind(("desk", "drawer", "shelf", "sidetable", "dresser")),
    "baseballbat": ObjectKind(("bed", "desk", "armchair", "laundryhamper")),
    "tennisracket": ObjectKind(("bed", "desk", "armchair", "dresser")),
    "teddybear": ObjectKind(("bed", "armchair", "dresser", "shelf")),
    "cloth": ObjectKind(
        (
            "countertop",
            "cabinet",
            "bathtubbasin",
            "sinkbasin",
            "toilet",
            "drawer",
            "laundryhamper",
            "dresser",
        ),
        frozenset({"clean"}),
    ),
    # bathroom
    "soapbar": ObjectKind(_BATH + ("sinkbasin", "bathtubbasin"), frozenset({"clean"})),
    "soapbottle": ObjectKind(_BATH),
    "spraybottle": ObjectKind(_BATH),
    "toiletpaper": ObjectKind(_BATH + ("toiletpaperhanger",)),
    "candle": ObjectKind(_BATH + ("bathtubbasin",)),
    "handtowel": ObjectKind(("handtowelholder", "countertop", "cabinet")),
    "towel": ObjectKind(("towelholder", "countertop", "bathtubbasin", "cabinet")),
    "plunger": ObjectKind(("cabinet", "garbagecan")),
    "scrubbrush": ObjectKind(("cabinet", "toilet", "garbagecan")),
    # lamps
    "desklamp": ObjectKind(_LAMP, pickupable=False),
    "floorlamp": ObjectKind(_LAMP, pickupable=False),
}

#: Objects that can be the target of a look-at-in-light task (ALFWorld's small handheld objects).
LOOK_TARGETS: frozenset[str] = frozenset(
    _words(
        """alarmclock book bowl box cd cellphone creditcard cup keychain laptop mug newspaper pen pencil
        pillow plate remotecontrol statue tissuebox vase watch baseballbat tennisracket teddybear"""
    )
)


@dataclass(frozen=True)
class RoomKind:
    """A room layout: receptacle types with one instance, ranged instance counts, objects and lamps."""

    fixed: tuple[str, ...]
    ranges: tuple[tuple[str, int, int], ...]
    objects: tuple[str, ...]
    lamps: tuple[str, ...] = ()


ROOMS: dict[str, RoomKind] = {
    "kitchen": RoomKind(
        fixed=("coffeemachine", "diningtable", "fridge", "garbagecan", "microwave", "sinkbasin", "toaster"),
        ranges=(
            ("cabinet", 3, 6),
            ("countertop", 1, 3),
            ("drawer", 1, 4),
            ("shelf", 0, 1),
            ("stoveburner", 2, 4),
        ),
        objects=_words(
            """apple bread egg lettuce potato tomato mug cup bowl plate pan pot kettle fork spoon knife
            butterknife spatula ladle saltshaker peppershaker winebottle dishsponge soapbottle"""
        ),
    ),
    "livingroom": RoomKind(
        fixed=("armchair", "coffeetable", "garbagecan", "sofa", "tvstand"),
        ranges=(
            ("cabinet", 0, 4),
            ("diningtable", 0, 1),
            ("drawer", 3, 5),
            ("dresser", 0, 1),
            ("ottoman", 0, 1),
            ("safe", 0, 1),
            ("shelf", 1, 4),
            ("sidetable", 1, 2),
        ),
        objects=_words(
            """remotecontrol keychain creditcard cellphone watch newspaper pillow box laptop book
            statue vase tissuebox houseplant plate"""
        ),
        lamps=("desklamp", "floorlamp"),
    ),
    "bedroom": RoomKind(
        fixed=("bed", "dresser", "garbagecan"),
        ranges=(
            ("armchair", 0, 1),
            ("cabinet", 0, 2),
            ("desk", 1, 2),
            ("drawer", 4, 7),
            ("laundryhamper", 0, 1),
            ("safe", 0, 1),
            ("shelf", 1, 4),
            ("sidetable", 1, 2),
        ),
        objects=_words(
            """alarmclock book cd cellphone creditcard keychain laptop pen pencil pillow mug bowl
            baseballbat tennisracket teddybear cloth watch"""
        ),
        lamps=("desklamp", "floorlamp"),
    ),
    "bathroom": RoomKind(
        fixed=("countertop", "garbagecan", "toilet", "toiletpaperhanger"),
        ranges=(
            ("bathtubbasin", 0, 1),
            ("cabinet", 3, 6),
            ("drawer", 2, 4),
            ("handtowelholder", 0, 1),
            ("shelf", 0, 3),
            ("sinkbasin", 1, 2),
            ("towelholder", 0, 1),
        ),
        objects=_words(
            """soapbar soapbottle spraybottle toiletpaper candle cloth dishsponge handtowel towel
            plunger scrubbrush tissuebox"""
        ),
    ),
}

ROOM_NAMES: tuple[str, ...] = tuple(sorted(ROOMS))


def kind_of(name: str) -> str:
    """The type of a numbered instance name: ``"cabinet 10"`` -> ``"cabinet"``."""
    return name.rsplit(" ", 1)[0]


def natural_key(name: str) -> tuple[str, int]:
    """Sort key ordering ``cabinet 2`` before ``cabinet 10``."""
    kind, _, number = name.rpartition(" ")
    return (kind, int(number)) if number.isdigit() else (name, 0)


def is_openable(receptacle: str) -> bool:
    return kind_of(receptacle) in OPENABLE


def is_lamp(obj: str) -> bool:
    return kind_of(obj) in LAMPS


def is_pickupable(obj: str) -> bool:
    kind = OBJECTS.get(kind_of(obj))
    return kind is not None and kind.pickupable


def can_take_state(obj: str, state: str) -> bool:
    kind = OBJECTS.get(kind_of(obj))
    return kind is not None and state in kind.props

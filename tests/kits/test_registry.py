"""The kit registry's lookups: a miss is remembered (readers ask once per step), and forgotten once the name
is registered."""

from __future__ import annotations

from reharness.envs import EnvKit, find_kit, register_kit


def test_a_remembered_miss_is_forgotten_when_the_kit_is_registered() -> None:
    assert find_kit("late-arrival") is None
    assert find_kit("late-arrival") is None  # answered from the remembered miss
    kit = register_kit(EnvKit(name="late-arrival", env="keypad_env:KeypadEnv", summary="registered late"))
    assert find_kit("late-arrival") is kit


def test_a_re_registration_replaces_and_an_unknown_name_lists_every_source() -> None:
    import pytest

    from reharness.core.errors import UnknownNameError
    from reharness.envs import get_kit

    first = register_kit(EnvKit(name="keypad-twice", env="keypad_env:KeypadEnv", summary="first"))
    assert get_kit("keypad-twice") is first
    second = register_kit(EnvKit(name="keypad-twice", env="keypad_env:KeypadEnv", summary="second"))
    assert get_kit("keypad-twice") is second  # registering again replaces (and forgets the cached lookup)
    with pytest.raises(UnknownNameError) as err:
        get_kit("keypad-twise")
    assert err.value.message == "unknown environment 'keypad-twise'"
    hint = err.value.hint or ""
    assert hint.startswith("did you mean 'keypad-twice'?") and "household" in hint  # registered and built-in
    assert hint.endswith("or a gymnasium text env as --env gym:ID")

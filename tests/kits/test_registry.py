"""The kit registry's lookups: a miss is remembered (readers ask once per step), and forgotten once the name
is registered."""

from __future__ import annotations

from reharness.envs import EnvKit, find_kit, register_kit


def test_a_remembered_miss_is_forgotten_when_the_kit_is_registered() -> None:
    assert find_kit("late-arrival") is None
    assert find_kit("late-arrival") is None  # answered from the remembered miss
    kit = register_kit(EnvKit(name="late-arrival", env="keypad_env:KeypadEnv", summary="registered late"))
    assert find_kit("late-arrival") is kit

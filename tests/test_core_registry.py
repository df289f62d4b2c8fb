"""core.registry: names, aliases, prefix names, replacement, did-you-mean errors and help-text listings."""

from __future__ import annotations

import pytest

from reharness.core.errors import UnknownNameError
from reharness.core.registry import Registry


def _engines() -> Registry[str]:
    reg: Registry[str] = Registry("engine", hint="ENGINE:ARG takes an argument")
    reg.add("fast", "F", aliases=("quick",))
    reg.register("slow")("S")
    reg.add("llm:", "L", metavar="llm:BACKEND", prefix=True)
    return reg


def test_names_aliases_and_prefixes_resolve() -> None:
    reg = _engines()
    assert reg.get("fast") == "F"
    assert reg.resolve("quick") == ("fast", "F", "")  # an alias resolves to its registered name
    assert reg.resolve("llm:openai:gpt@http://x") == ("llm:", "L", "openai:gpt@http://x")
    assert "quick" in reg and "llm:x" in reg
    assert reg.names() == ("fast", "slow", "llm:")  # aliases are not listed
    assert len(reg) == 3 and list(reg) == ["fast", "slow", "llm:"]
    assert reg.items()[0] == ("fast", "F") and reg.entries() == ("F", "S", "L")


def test_prefix_needs_an_argument() -> None:
    reg = _engines()
    for name in ("llm:", "llm:  ", "llm"):
        assert reg.lookup(name) is None
        assert name not in reg


def test_unknown_names_read_the_same_and_list_close_matches() -> None:
    reg = _engines()
    with pytest.raises(UnknownNameError) as err:
        reg.get("fsat")
    assert err.value.message == "unknown engine 'fsat'"
    assert "did you mean 'fast'" in err.value.hint and "ENGINE:ARG takes an argument" in err.value.hint
    custom = reg.unknown("zzz", known=["a", "b"], hint="or pass a path")
    assert custom.message == "unknown engine 'zzz'" and custom.hint == "known: a, b; or pass a path"


def test_a_name_ending_in_a_colon_is_plain_unless_registered_as_a_prefix() -> None:
    reg: Registry[str] = Registry("kit")
    reg.add("pkg:", "P")
    assert reg.get("pkg:") == "P" and "pkg:x" not in reg


def test_the_longest_prefix_wins() -> None:
    reg: Registry[str] = Registry("spec")
    reg.add("a:", "A", prefix=True)
    reg.add("a:b:", "AB", prefix=True)
    assert reg.resolve("a:b:c") == ("a:b:", "AB", "c") and reg.resolve("a:c") == ("a:", "A", "c")


def test_twice_is_an_error_unless_replacing() -> None:
    reg = _engines()
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("fast", "F2")
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("other", "O", aliases=("quick",))
    reg.add("fast", "F2", replace=True)
    assert reg.get("fast") == "F2"


def test_describe_lists_what_lookup_accepts() -> None:
    reg = _engines()
    assert reg.shown() == ("fast", "slow", "llm:BACKEND")
    assert reg.describe() == "fast, slow or llm:BACKEND"
    assert reg.describe("and") == "fast, slow and llm:BACKEND"
    assert Registry[int]("x").describe() == ""

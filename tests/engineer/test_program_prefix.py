"""The program grammar as a decoding constraint: which partial replies can still become a valid program."""

from __future__ import annotations

import pytest

from reharness.engineer.program import program_patch, program_text
from reharness.engineer.program_prefix import program_constraint, viable_program_reply

VIABLE = [
    "",
    "<pro",
    "<program>",
    "<program>snap",
    "<program>snap_to_admissible(cut",
    "<program>snap_to_admissible(cutoff=0.",
    "<program>snap_to_admissible(cutoff=0.75, fallback=no",
    "<program>snap_to_admissible(cutoff=0.75)</pro",
    "<program>snap_to_admissible(cutoff=0.75) i",
    "<program>snap_to_admissible(cutoff=0.75) if state.page",
    "<program>snap_to_admissible(cutoff=0.75) if step<",
    "<program>snap_to_admissible(cutoff=0.75) if step!",
    "<program>snap_to_admissible(cutoff=0.75); purchase_guard(max_blocks=2",
    "<program>snap_to_admissible(cutoff=0.75) if state.buy_now_available==tr",
    "<program>snap_to_admissible(cutoff=0.75) if state.page_type==item",
]
DEAD = [
    "x",
    "<program>bogus",
    "<program>bogus(x=0.",
    "<program>snap_to_admissible(shown",  # a parameter of another repair
    "<program>snap_to_admissible(cutoff=0.75, cutoff",  # given twice
    "<program>snap_to_admissible(cutoff=0.75, fallback=invalid",  # not one of its values
    "<program>snap_to_admissible(cutoff=9)",  # outside the space and the range
    "<program>snap_to_admissible(cutoff=081",  # already too large
    "<program>snap_to_admissible(cutoff=0.885\n\n-",  # a dangling character out of place
    "<program>snap_to_admissible-",  # ... after a name that could still grow without it
    "<program>snap_to_admissible(cut-",
    "<program>snap_to_admissible(cutoff=0.75); purch!",
    "<program>snap_to_admissible(cutoff=0.75.",  # a second decimal point
    "<program>purchase_guard(max_blocks=2.",  # a point in an integer
    "<program>purchase_guard(max_blocks=-",  # no allowed integer starts so (1 to 5)
    "<program>purchase_guard(max_blocks=0",
    "<program>snap_to_admissible(cutoff=0.75); purchase_guard\r\x1d",  # control characters as blanks
    "<program>snap_to_admissible(cutoff=0.75)</program ",  # a closing tag cannot hold a blank
    "<program>snap_to_admissible(cutoff=0.75) if step<1234567",  # condition values stay short
    "<program>snap_to_admissible(cutoff=0.75) if state.page_type==" + "x" * 41,
    "<program>snap_to_admissible(cutoff=0.75) if state.buy_now_available==maybe",  # not a bool
    "<program>snap_to_admissible(cutoff=0.75) if step<item",  # not a number
    "<program>snap_to_admissible(cutoff=0.75); snap",  # the same repair twice
    "<program>snap_to_admissible(cutoff=0.75) =",
    "<program>snap_to_admissible(cutoff=0.75) if nothing",
    "<program>snap_to_admissible(cutoff=0.75)</program>x",  # only the end may follow the closing tag
    "<program>snap_to_admissible(cutoff=0.75)</program>\n",
    "<program>snap_to_admissible(cutoff=0.75,   ",  # runaway whitespace
    "<program>snap_to_admissible(cutoff=-",  # no allowed cutoff is negative: a dead end, not a prefix
    "<program>snap_to_admissible(cutoff = -",
    "<program>snap_to_admissible(cutoff  =",  # a run of blanks inside a call
    "<program>snap_to_admissible(  cutoff",
    "<program>snap_to_admissible(cutoff=0.75,\nfallback",  # a newline inside a call
    "<program>snap_to_admissible(cutoff=0.75 ,  fallback=none)",
]
COMPLETE = [
    "<program>snap_to_admissible(cutoff=0.75)</program>",
    "\n<program>snap_to_admissible(cutoff=0.75) if step<=3; purchase_guard(max_blocks=2)</program>",
]


@pytest.mark.parametrize("text", VIABLE)
def test_partial_replies_that_can_still_become_a_program(text: str) -> None:
    assert viable_program_reply(text, "shop")
    assert not viable_program_reply(text, "shop", final=True)  # none of them is finished


@pytest.mark.parametrize("text", DEAD)
def test_partial_replies_that_cannot(text: str) -> None:
    assert not viable_program_reply(text, "shop")


@pytest.mark.parametrize("text", COMPLETE)
def test_a_finished_reply_must_parse_and_compile(text: str) -> None:
    viable = program_constraint("shop")
    assert viable(text, True) and viable(text, False)
    assert program_patch(program_text(text) or "", "shop").metadata["language"] == "repair-program-v1"
    assert not viable(text.replace("cutoff=0.75", "cutoff=0.75, cutoff=0.8"), True)


def test_one_blank_between_a_calls_tokens_is_allowed_not_a_run_of_them() -> None:
    """Seed 1 at lr 1e-3 ended 32 of its last 40 GRPO samples inside ``cutoff = -`` after runs of blanks:
    inside a call, blanks come one at a time, and a sign starts only a value some parameter allows."""
    one = "<program>snap_to_admissible(cutoff = 0.75, fallback = none)</program>"
    assert viable_program_reply(one, "shop", final=True)
    for run in ("  ", " " * 8, " \n", "\t"):
        assert not viable_program_reply(f"<program>snap_to_admissible(cutoff{run}", "shop")
        assert not viable_program_reply(f"<program>snap_to_admissible(cutoff={run}", "shop")
    assert viable_program_reply("<program>snap_to_admissible(cutoff=0.75)  ;", "shop")  # outside a call


def test_the_grammar_is_per_environment() -> None:
    assert viable_program_reply("<program>snap_to_admissible(cutoff=0.75)</program>", "household", True)
    assert not viable_program_reply("<program>purchase_guard", "household")  # a shop repair
    assert viable_program_reply("<program>sql_error_hint(streak=1)</program>", "db", True)

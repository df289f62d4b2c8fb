"""Repair programs: parsing, compilation through the operators' code generation, conditions, errors.

Programs compile to ordinary patches that pass static validation and run in real episodes; the teacher's
proposals are programs too (same patch identity); malformed programs are invalid proposals, never crashes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from proposer_helpers import INPROCESS, episode, random_packet, sloppy_household

from reharness.engineer.base import finish_reply
from reharness.engineer.operators import KNOBS, OperatorEngineer, get_operator, merge, program_operators
from reharness.engineer.program import (
    HOOK_LANGUAGE,
    PROGRAM_LANGUAGE,
    compile_program,
    condition_fields,
    language_help,
    parse_program,
    program_patch,
    program_reply,
    program_text,
    render_program,
    vocabulary,
)
from reharness.failures import FailurePacket
from reharness.patches import LeakageEvidence, validate_patch
from reharness.patches.errors import PatchFormatError

ENVS = ("household", "shop", "db")
STRICT = LeakageEvidence(any_numbered_instance=True)


@pytest.fixture(scope="module")
def packets() -> dict[str, FailurePacket]:
    return {env: random_packet(env) for env in ENVS}


def test_a_program_compiles_to_the_operators_own_patch() -> None:
    """Without conditions or off-grid values a program is exactly the operators' merged patch."""
    program = parse_program("loop_breaker(mode=block) ; snap_to_admissible", "household")
    assert program.text() == (  # canonical: operator priority order, every parameter
        "snap_to_admissible(cutoff=0.85, fallback=none); loop_breaker(repeats=3, window=6, mode=block)"
    )
    patch = compile_program(program)
    merged = merge(
        [(get_operator("snap_to_admissible"), {}), (get_operator("loop_breaker"), {"mode": "block"})],
        "household",
    )
    assert patch.identity == merged.identity and patch.hooks == merged.hooks
    assert patch.metadata["language"] == PROGRAM_LANGUAGE and patch.metadata["program"] == program.text()
    assert parse_program(program.text(), "household") == program  # the canonical text parses back


def test_every_repair_of_every_env_compiles_to_a_valid_patch(packets: dict[str, FailurePacket]) -> None:
    checked = 0
    for env in ENVS:
        evidence = packets[env].leakage_evidence()
        for op in program_operators(env):
            fields = [f for f, kind in (condition_fields(env) or {}).items() if kind == "int"]
            for params in [op.defaults(env), *({k: v[-1]} for k, v in op.space(env).items())]:
                text = render_program([(op, params)], env) + f" if {fields[checked % len(fields)]}>=1"
                patch = program_patch(text, env)
                assert validate_patch(patch, evidence=evidence) == [], text
                assert validate_patch(patch, evidence=STRICT) == [], text
                checked += 1
    assert checked > 40


def test_values_inside_ranges_and_conditions_reach_beyond_the_teacher() -> None:
    """A program may use off-grid values (inside the operator's range), knobs and conditions — repairs
    the teacher never proposes; values outside the range are refused with the allowed ones."""
    patch = program_patch("snap_to_admissible(cutoff=0.7) if counters.invalid_streak>=1", "household")
    code = patch.hooks["before_action"]
    assert "score >= 0.7" in code and "((ctx.get('counters') or {}).get('invalid_streak') or 0) >= 1" in code
    assert "if counters.invalid_streak>=1" in patch.description
    assert 0.7 not in get_operator("snap_to_admissible").space("household")  # off the teacher's grid
    assert program_patch("loop_breaker(repeats=6, window=10)", "db").hooks
    with pytest.raises(PatchFormatError, match=r"a number in \[0.5, 0.95\]") as err:
        parse_program("snap_to_admissible(cutoff=0.3)", "household")
    assert err.value.code == "bad_param"
    assert {op.name for op in KNOBS} <= {op.name for op in program_operators("household")}
    assert not {op.name for op in KNOBS} & {op.name for op in OperatorEngineer().operators}


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        ("", "empty_program", "empty"),
        ("snap_to_admissible(cutoff=0.85", "program_syntax", "expected"),
        ("snap_to_admissible(cutoff=0.85) loop_breaker()", "program_syntax", "';' between terms"),
        ("snap_to_admisible()", "unknown_operator", "snap_to_admissible"),
        ("purchase_guard()", "unknown_operator", "does not apply to 'household'"),
        ("snap_to_admissible(cutof=0.8)", "bad_param", "cutoff"),
        ("goal_reminder(every=true)", "bad_param", "every=True"),
        ("loop_breaker(mode=force, mode=block)", "bad_param", "given twice"),
        ("loop_breaker() if stepz>=2", "bad_condition", "step"),
        ("loop_breaker() if target_found>=1", "bad_condition", "bool"),
        ("loop_breaker() if task.task_type>=1", "bad_condition", "str"),
        ("loop_breaker(); loop_breaker()", "duplicate_operator", "twice"),
        (
            "loop_breaker(); snap_to_admissible(); goal_reminder(); step_warning()",
            "too_many_terms",
            "at most 3",
        ),
        ("loop_breaker() if __import__>=1", "bad_condition", "unknown ctx field"),
        ("loop_breaker(mode='x')", "program_syntax", "unexpected character"),
    ],
)
def test_malformed_programs_are_clear_errors(text: str, code: str, words: str) -> None:
    with pytest.raises(PatchFormatError) as err:
        program_patch(text, "household")
    assert err.value.code == code and words in str(err.value) + str(err.value.hint)


def test_replies_in_either_language_go_through_one_path(packets: dict[str, FailurePacket]) -> None:
    packet = packets["household"]
    good = finish_reply(program_reply("snap_to_admissible(fallback=block)"), packet, {"engineer": "t"})
    assert good.valid and good.patch is not None and good.meta["language"] == PROGRAM_LANGUAGE
    assert good.patch.metadata["language"] == PROGRAM_LANGUAGE and good.patch.metadata["engineer"] == "t"
    assert program_text("<think>loops</think>\n<program>loop_breaker()</program>") == "loop_breaker()"
    bad = [
        "<program>loop_breaker(</program>",
        "<program>snap_to_admissible()",  # cut off
        "<program>sql_guard()</program>",  # another env's repair
        "<think>unfinished <program>loop_breaker()</program>",
    ]
    results = [finish_reply(text, packet, {}) for text in bad]
    assert [r.error_code for r in results] == [
        "program_syntax",
        "program_syntax",
        "unknown_operator",
        "unterminated_think",
    ]
    assert all(not r.valid and r.patch is None and r.error for r in results)
    teacher = asyncio.run(OperatorEngineer().propose(packet, 3, seed=0))[0]
    hooks = finish_reply(teacher.raw_reply, packet, {})  # free-form hook code, as large engineers write
    assert hooks.valid and hooks.meta["language"] == HOOK_LANGUAGE


def test_teacher_proposals_carry_their_program(packets: dict[str, FailurePacket]) -> None:
    """Every operators proposal records a program that compiles to exactly its patch (the SFT target)."""
    for env in ENVS:
        for proposal in asyncio.run(OperatorEngineer().propose(packets[env], 6, seed=3)):
            assert proposal.patch is not None
            compiled = program_patch(proposal.meta["program"], env)
            assert compiled.identity == proposal.patch.identity


def test_a_condition_gates_the_repair_in_real_episodes() -> None:
    """snap fires on every near-miss; gated by ``step>=6`` it leaves the first six decisions alone."""

    def rewritten(text: str) -> list[int]:
        patch = program_patch(text, "household")
        record = episode("household", sloppy_household(), patch, task=0, step_limit=14, limits=INPROCESS)
        assert not any(s.hook_errors for s in record.steps)
        return [i for i, s in enumerate(record.steps) if "rewritten" in s.flags]

    always, gated = rewritten("snap_to_admissible()"), rewritten("snap_to_admissible() if step>=6")
    assert always and min(always) < 6
    assert gated and min(gated) >= 6 and set(gated) <= set(range(6, 14))


def test_knobs_show_admissible_and_warn_near_the_step_limit() -> None:
    patch = program_patch("show_admissible(limit=3); step_warning(left=2)", "household")
    record = episode("household", sloppy_household(1), patch, task=0, step_limit=8, limits=INPROCESS)
    messages: list[Any] = [e["text"] for s in record.steps for e in s.effects if e["kind"] == "message"]
    assert messages and messages[0].startswith("Valid actions now: ")
    assert any("Only 2 steps are left." in m for m in messages)


def test_the_language_is_described_and_tokenised_for_a_tiny_engineer() -> None:
    for env in ENVS:
        text = language_help(env)
        assert all(op.name in text for op in program_operators(env)) and "Condition fields:" in text
    words = vocabulary()
    assert {"<program>", "</program>", "snap_to_admissible", "cutoff=", "counters.invalid_streak"} <= set(
        words
    )
    assert len(words) == len(set(words))

"""Runtime signals of one episode, derived from its trajectory only (Harness-R1's per-trace counters).

Failure packets show these next to each trace so the engineer sees *how* an episode failed in numbers
(REFERENCE.md §1: WebShop searches, clicks, buy-now, repeated searches/clicks, turns without an action,
step-limit hit; ALFWorld actions, "Nothing happens." count, repeated actions/observations; DBBench SQL count,
errors, empty results, answer given). Every episode gets the common signals; ``household``, ``shop``, ``db``
and ``code`` add their own (code: ``edits``, ``edit_errors``, ``test_runs``, ``submitted``,
``premature_answer`` — a submit with no edit or no test run after the last edit). Keys are stable; values
are ints except ``score``.

Common: ``turns`` (decisions), ``actions`` (actions the env executed), ``invalid_actions``,
``format_errors``, ``tool_errors``, ``repeated_actions`` (executed actions equal to the previous executed
one), ``repeated_observations`` (steps whose observation was already seen), ``blocked`` / ``forced`` /
``rewritten`` (hook interventions), ``hook_errors``, ``step_limit_hit`` (0/1), ``score``.
household: ``nothing_happens``. shop: ``searches``, ``clicks``, ``buy_now``, ``repeated_searches`` (same
keywords as an earlier search), ``repeated_clicks`` (a click equal to the previous action),
``products_viewed`` (distinct product ids clicked), ``turns_without_action`` (replies that executed nothing:
unparsed, bad tool call, blocked). db: ``sql_count``, ``sql_errors``, ``empty_results``, ``repeated_sql``
(a statement run before), ``answer_given`` (0/1).
"""

from __future__ import annotations

from reharness.failures.evidence import (
    BAD_TOOL_CALL,
    NOTHING_HAPPENS,
    PRODUCT_ID,
    action_key,
    code_command,
    code_edit,
    code_premature,
    db_action,
    executed,
    is_empty_result,
    is_sql_result,
    normalise,
    shop_action,
    stale_steps,
)
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
    if record.env == "household":
        out["nothing_happens"] = sum(normalise(s.observation) == NOTHING_HAPPENS for s in done)
    elif record.env == "shop":
        out.update(_shop(record))
    elif record.env == "db":
        out.update(_db(record))
    elif record.env == "code":
        out.update(_code(record))
    return dict(sorted(out.items()))


def _count(record: EpisodeRecord, flag: str) -> int:
    return sum(flag in s.flags for s in record.steps)


def _shop(record: EpisodeRecord) -> Signals:
    searches: list[str] = []
    clicks = buy_now = repeated_searches = repeated_clicks = 0
    products: set[str] = set()
    previous: str | None = None
    for step in record.steps:
        if not executed(step):
            continue
        parsed = shop_action(step.action or "")
        key = None if parsed is None else f"{parsed[0]}[{normalise(parsed[1]).lower()}]"
        if parsed is not None and parsed[0] == "search":
            words = " ".join(sorted(normalise(parsed[1]).lower().split()))
            repeated_searches += words in searches
            searches.append(words)
        elif parsed is not None:
            clicks += 1
            repeated_clicks += key == previous
            buy_now += parsed[1].lower() == "buy now"
            if PRODUCT_ID.fullmatch(parsed[1]):
                products.add(parsed[1].lower())
        previous = key
    return {
        "searches": len(searches),
        "clicks": clicks,
        "buy_now": buy_now,
        "repeated_searches": repeated_searches,
        "repeated_clicks": repeated_clicks,
        "products_viewed": len(products),
        "turns_without_action": sum(not executed(s) for s in record.steps),
    }


def _code(record: EpisodeRecord) -> Signals:
    done = [s for s in record.steps if executed(s)]
    commands = [code_command(s.action or "") for s in done]
    submitted = bool(commands) and commands[-1] == "submit"
    return {
        "edits": sum(code_edit(s) and not s.observation.startswith("Error:") for s in done),
        "edit_errors": sum(code_edit(s) and s.observation.startswith("Error:") for s in done),
        "test_runs": commands.count("run_tests"),
        "submitted": int(submitted),
        "premature_answer": int(submitted and code_premature(record.steps) is not None),
    }


def _db(record: EpisodeRecord) -> Signals:
    statements: list[str] = []
    errors = empty = repeated = answered = 0
    for step in record.steps:
        if not executed(step):
            continue
        parsed = db_action(step.action or "")
        if parsed.kind == "answer":
            answered = 1
        elif parsed.kind == "sql":
            key = action_key("db", step.action or "")
            repeated += key in statements
            statements.append(key)
            errors += not is_sql_result(step.observation)
            empty += is_empty_result(step.observation)
    return {
        "sql_count": len(statements),
        "sql_errors": errors,
        "empty_results": empty,
        "repeated_sql": repeated,
        "answer_given": answered,
    }

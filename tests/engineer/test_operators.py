"""Repair operators: every variant validates statically, runs without hook errors, and really repairs.

Static validation covers the whole parameter grid of every operator in every environment it applies to, with
the leakage evidence of real failure packets (and the strict "any numbered instance" rule). Behavioural
tests run real episodes with the patch in the sandbox and compare them with the unpatched episode.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from proposer_helpers import (
    INPROCESS,
    EnvAgent,
    answer,
    episode,
    packet_of,
    random_packet,
    sloppy_household,
    sql,
)

from reharness.core.errors import ConfigError, UnknownNameError
from reharness.engineer import make_engineer
from reharness.engineer.operators import (
    OperatorEngineer,
    get_operator,
    merge,
    operators_for,
    shipped_operators,
)
from reharness.envs.registry import make_env
from reharness.failures import FailureCode
from reharness.failures.detectors import failure_codes
from reharness.patches import LeakageEvidence, extract_patch, validate_patch
from reharness.runtime import FunctionAgent
from reharness.runtime.effects import HOOK_POINTS

ENVS = ("household", "shop", "db", "code", "apps")


@pytest.fixture(scope="module")
def evidence() -> dict[str, LeakageEvidence]:
    return {env: random_packet(env).leakage_evidence() for env in ENVS}


def covering_variants(op: Any, env: str) -> list[dict[str, Any]]:
    """Defaults, plus every value of every parameter once (the others at their defaults)."""
    space = op.space(env)
    out = [op.defaults(env)]
    for key, values in space.items():
        out += [op.defaults(env) | {key: v} for v in values[1:]]
    return out


def test_every_variant_of_every_operator_validates(evidence: dict[str, LeakageEvidence]) -> None:
    strict = LeakageEvidence(any_numbered_instance=True)
    checked = 0
    for op in shipped_operators():
        envs = [env for env in ENVS if op.applies_to(env)]
        assert envs and (op.generic or set(op.envs) == set(envs))
        assert {FailureCode(c) for c in op.codes}  # every code is in the taxonomy
        for env in envs:
            for params in op.variants(env):
                patch = op.build(params, env)
                assert patch.env == env and patch.hooks
                assert validate_patch(patch, evidence=evidence[env]) == [], (op.name, env, params)
                assert validate_patch(patch, evidence=strict) == [], (op.name, env, params)
                if env == "db":  # DBBench honours block and hint only
                    code = "".join(patch.hooks.values())
                    assert "force_action" not in code and "rewrite_action" not in code
                checked += 1
    assert checked > 150


def test_merging_combines_operators_sharing_a_hook_point(evidence: dict[str, LeakageEvidence]) -> None:
    for env in ENVS:
        ops = operators_for(env)
        for combo in itertools.combinations(ops, 3):
            patch = merge([(op, {}) for op in combo], env)
            assert validate_patch(patch, evidence=evidence[env]) == []
            assert list(patch.hooks) == [p for p in HOOK_POINTS if p in patch.hooks]
            for point, code in patch.hooks.items():
                users = [op for op in combo if point in op.points({}, env)]
                assert code.count("\ndef hook(ctx, nb):") + code.startswith("def hook(") == 1
                assert all(
                    f"def {op.fragments(op.defaults(env), env)[point].function}(" in code for op in users
                )
    snap, loop = get_operator("snap_to_admissible"), get_operator("loop_breaker")
    patch = merge([(loop, {"mode": "force"}), (snap, {})], "household")
    assert list(patch.hooks) == ["before_action"]
    code = patch.hooks["before_action"]
    assert code.startswith("import difflib\n") and code.index("def snap_to_admissible") < code.index(
        "def loop"
    )
    assert [o["name"] for o in patch.metadata["operators"]] == ["snap_to_admissible", "loop_breaker"]


def test_parameters_and_names_are_checked() -> None:
    snap = get_operator("snap_to_admissible")
    with pytest.raises(ConfigError, match="no parameter 'cutof'") as err:
        snap.build({"cutof": 0.6}, "household")
    assert "cutoff" in (err.value.hint or "")
    with pytest.raises(ConfigError, match="outside its space"):
        snap.build({"cutoff": 0.1}, "household")
    with pytest.raises(ConfigError, match="does not apply to 'db'"):
        snap.build({}, "db")
    with pytest.raises(ConfigError, match="outside its space"):  # no forcing in db
        get_operator("loop_breaker").build({"mode": "force"}, "db")
    with pytest.raises(UnknownNameError) as unknown:
        get_operator("snap_to_admisible")
    assert unknown.value.message == "unknown repair operator 'snap_to_admisible'"
    assert "did you mean 'snap_to_admissible'" in (unknown.value.hint or "")
    with pytest.raises(ConfigError, match="listed twice"):
        merge([(snap, {}), (snap, {})], "household")


def test_operator_lookup_by_name_knows_generic_kit_and_built_in_kits_operators() -> None:
    from reharness.engineer.operators import OPERATORS

    assert get_operator("snap_to_admissible") is OPERATORS.get("snap_to_admissible")
    assert "show_admissible" in OPERATORS and "lenient_extract" in OPERATORS  # knobs and lenient ones
    assert "sql_error_hint" not in OPERATORS  # a kit's own operator comes from its kit
    assert get_operator("sql_error_hint", "db").name == "sql_error_hint"
    assert get_operator("purchase_guard").name == "purchase_guard"  # a built-in kit's, with no env given
    with pytest.raises(UnknownNameError) as unknown:
        get_operator("sql_eror_hint", "db")
    assert "did you mean 'sql_error_hint'" in (unknown.value.hint or "")


@pytest.mark.parametrize("env", ENVS)
def test_variants_run_in_real_episodes_without_hook_errors(env: str) -> None:
    agents = {
        "household": [EnvAgent(messy_household)],
        "shop": [EnvAgent(messy_shop)],
        "db": [EnvAgent(faulty_db), EnvAgent(early_answer), EnvAgent(misquoting), EnvAgent(doubled_clause)],
        "code": [EnvAgent(hasty_coder), EnvAgent(clumsy_coder)],
        "apps": [EnvAgent(faulty_apps)],
    }[env]
    silent = []
    for op in operators_for(env):
        effects = 0
        for params, agent in itertools.product(covering_variants(op, env), agents):
            record = episode(env, agent, op.build(params, env), task=1, limits=INPROCESS, step_limit=8)
            assert not [e for s in record.steps for e in s.hook_errors], (op.name, params)
            effects += sum(len(s.effects) for s in record.steps)
        if not effects:
            silent.append(op.name)
    assert silent == [], env


def test_snap_turns_near_misses_into_admissible_actions() -> None:
    patch = get_operator("snap_to_admissible").build({}, "household")
    plain = episode("household", sloppy_household(), task=0, step_limit=20)
    patched = episode("household", sloppy_household(), patch, task=0, step_limit=20)
    invalid = [sum("invalid_action" in s.flags for s in r.steps) for r in (plain, patched)]
    rewritten = [s for s in patched.steps if "rewritten" in s.flags]
    assert invalid[0] >= 8 and invalid[1] == 0
    assert len(rewritten) >= 8 and not any(s.dropped_effects for s in patched.steps)
    for step in rewritten:
        assert step.parsed_action.startswith("go to the ") and step.action == step.parsed_action.replace(
            "go to the ", "go to "
        )


def test_loop_breaker_forces_an_unexplored_admissible_action() -> None:
    patch = get_operator("loop_breaker").build({"mode": "force", "repeats": 3}, "household")
    looker = FunctionAgent(lambda r: "Action: look", policy_id="looker")
    plain = episode("household", looker, task=2, step_limit=12)
    patched = episode("household", looker, patch, task=2, step_limit=12)
    assert {s.action for s in plain.steps} == {"look"}
    forced = [s for s in patched.steps if "forced" in s.flags]
    assert len(forced) >= 3 and not any(s.dropped_effects for s in patched.steps)
    assert all(s.action and s.action.startswith("go to ") for s in forced)
    assert len({s.action for s in forced}) == len(forced)  # each time a place not visited yet
    assert all("invalid_action" not in s.flags for s in patched.steps)


def messy_household(env: Any, request: Any, i: int) -> str:
    """A near-miss, a reply with no action, three identical actions, then near-misses."""
    near_miss = "Action: " + env.expert_action().replace(" ", "  ", 1) + "x"
    script = [near_miss, "Think: where now?\nno idea", "Action: look", "Action: look", "Action: look"]
    return script[i] if i < len(script) else near_miss


FAULTY_APPS = (
    "print(apis.notes.show_notes())",  # 401: no token
    "print(apis.notes.show_notez(access_token='x'))",  # 404: no such API
    "print(apis.todo.show_tasks(access_token='x', page_limit=50))",  # 422: page_limit > 20
    "print(apis.api_docs.show_api_doc(app_name='notes'))",  # 422: api_name missing
    "apis.supervisor.complete_task(answer='1')",  # completes without paging through anything
)


def faulty_apps(env: Any, request: Any, i: int) -> str:
    """Auth error, API misuse and an unpaged completion, then the ground-truth program."""
    return f"```python\n{FAULTY_APPS[i]}\n```" if i < len(FAULTY_APPS) else env.expert_action()


def faulty_db(env: Any, request: Any, i: int) -> str:
    """A bad column, a malformed reply, an empty result twice, then the expert."""
    name, columns = db_table(env)
    empty = sql(f"SELECT * FROM `{name}` WHERE `{columns[0]}` = 'zzz-none'")
    script = [sql(f"SELECT `no_such_col` FROM `{name}`"), "I will look at the table.", empty, empty]
    return script[i] if i < len(script) else env.expert_action()


def erring_db(env: Any, request: Any, i: int) -> str:
    """Never recovers: a wrong column name on every other step, otherwise a count."""
    name, _ = db_table(env)
    return sql(f"SELECT `no_such_col` FROM `{name}`" if i % 2 == 0 else f"SELECT COUNT(*) FROM `{name}`")


def doubled_clause(env: Any, request: Any, i: int) -> str:
    """A statement with its WHERE clause written twice, then the expert."""
    table = env.task.state["table"]["name"]
    return sql(f"SELECT * FROM `{table}` WHERE 1 = 1 WHERE 1 = 1") if i == 0 else env.expert_action()


def early_answer(env: Any, request: Any, i: int) -> str:
    return answer('["0"]') if i == 0 else env.expert_action()


def messy_shop(env: Any, request: Any, i: int) -> str:
    """Search, go back, repeat the search, a reply with no action, a near-miss click, then buy early."""
    script = {
        1: "Action: click[back to search]",
        3: "Think: hmm\nnot sure",
        4: "Action: click[back to searc]",
    }
    return script[i] if i in script else hasty_shopper(env, request, i)


def hasty_shopper(env: Any, request: Any, i: int) -> str:
    """The shop expert, except that on a product page it clicks 'buy now' unless the harness objected."""
    warned = "Do not buy yet" in request.messages[-1].content
    if env.runtime_state()["state"]["page_type"] == "item" and not warned:
        return "Action: click[buy now]"
    return "Action: " + env.expert_action()


def test_purchase_guard_blocks_buying_before_required_options() -> None:
    patch = get_operator("purchase_guard").build({}, "shop")
    for task in range(12):
        plain = episode("shop", EnvAgent(hasty_shopper), task=task)
        if plain.score < 1.0:
            break
    else:  # pragma: no cover - the generator always has tasks with required options
        pytest.fail("no task where buying early loses reward")
    patched = episode("shop", EnvAgent(hasty_shopper), patch, task=task)
    blocked = [s for s in patched.steps if "blocked" in s.flags]
    assert blocked and all(
        s.observation.startswith("Do not buy yet: select the required options") for s in blocked
    )
    assert patched.success and patched.score > plain.score


def db_table(env: Any) -> tuple[str, list[str]]:
    table = env.task.state["table"]
    return table["name"], list(table["columns"])


def test_sql_error_hint_appears_in_the_next_observation() -> None:
    tables: list[tuple[str, list[str]]] = []

    def agent(env: Any, request: Any, i: int) -> str:
        tables.append(db_table(env))
        return sql(f"SELECT `no_such_col` FROM `{tables[-1][0]}`") if i == 0 else env.expert_action()

    patch = get_operator("sql_error_hint").build({"headers": True}, "db")
    plain_agent, patched_agent = EnvAgent(agent), EnvAgent(agent)
    plain = episode("db", plain_agent, task=3)
    patched = episode("db", patched_agent, patch, task=3)
    assert plain.steps[0].observation == patched.steps[0].observation  # the env's own error text
    assert plain.steps[0].observation.startswith("no such column")
    # the feedback the model reads after the failed statement carries the hint, with the real columns
    name, columns = tables[-1]
    seen_plain = plain_agent.requests[1].messages[-1].content
    seen_patched = patched_agent.requests[1].messages[-1].content
    assert "[Harness]" not in seen_plain
    hint = seen_patched.split("[Harness] ", 1)[1]
    assert hint.startswith("The last SQL statement failed (no such column).")
    assert f"`{name}`" in hint and all(f"`{c}`" in hint for c in columns)
    assert patched.success == plain.success  # the expert recovers either way


def test_answer_guard_blocks_an_answer_before_any_query() -> None:
    patch = get_operator("answer_guard").build({}, "db")
    plain = episode("db", EnvAgent(early_answer), task=0)
    patched = episode("db", EnvAgent(early_answer), patch, task=0)
    assert plain.num_steps == 1 and not plain.success
    assert "blocked" in patched.steps[0].flags
    assert patched.steps[0].observation.startswith("Not answering yet: no SQL query has succeeded")
    assert patched.success


def test_goal_reminder_fires_every_k_steps_with_task_fields() -> None:
    patch = get_operator("goal_reminder").build({"every": 3, "on_failure": False}, "household")
    record = episode("household", sloppy_household(2), patch, task=0, step_limit=10)
    fired = [i for i, s in enumerate(record.steps) if any(e["kind"] == "message" for e in s.effects)]
    assert fired == [3, 6, 9]
    text = record.steps[3].effects[0]["text"]
    assert text.startswith("Remember the task: " + record.instruction.strip())
    assert "target type:" in text and "Progress so far:" in text


# --------------------------------------------------------------------------- the operators engineer
@pytest.fixture(scope="module")
def packets() -> dict[str, Any]:
    return {
        "household": packet_of("household", [sloppy_household()]),
        "shop": packet_of("shop", [EnvAgent(hasty_shopper)], tasks=range(6)),
        "db": packet_of("db", [EnvAgent(faulty_db), EnvAgent(early_answer), EnvAgent(erring_db)]),
    }


def test_scores_follow_the_packet_evidence(packets: dict[str, Any]) -> None:
    engineer = OperatorEngineer()
    expected_top = {
        "household": {"snap_to_admissible", "invalid_action_hint"},
        "shop": {"purchase_guard"},
        "db": {"sql_error_hint", "sql_guard", "answer_guard"},
    }
    for env, packet in packets.items():
        scores = engineer.scores(packet)
        assert list(scores) == [op.name for op in operators_for(env)]
        best = max(scores.values())
        assert {name for name, s in scores.items() if s == best} <= expected_top[env], (env, scores)
        assert min(scores.values()) > 0  # every applicable operator stays possible
    db = engineer.scores(packets["db"])
    assert db["sql_error_hint"] > db["empty_result_hint"] and db["sql_error_hint"] > db["format_reminder"]
    assert packets["household"].header.code_counts.get("invalid_action")
    assert (
        engineer.scores(packets["household"])["snap_to_admissible"]
        > engineer.scores(packets["household"])["format_reminder"]
    )


def test_operator_proposals_are_valid_varied_and_deterministic(packets: dict[str, Any]) -> None:
    for env, packet in packets.items():
        proposals = asyncio.run(make_engineer("operators").propose(packet, 8, seed=5))
        again = asyncio.run(OperatorEngineer().propose(packet, 8, seed=5))
        other = asyncio.run(OperatorEngineer().propose(packet, 8, seed=6))
        assert len(proposals) == 8 and all(p.valid for p in proposals), [p.error for p in proposals]
        assert [p.to_dict() for p in proposals] == [p.to_dict() for p in again]
        ids = [p.patch.identity for p in proposals if p.patch]
        assert len(set(ids)) >= 7, env
        assert ids[:2] == [
            p.patch.identity for p in other[:2] if p.patch
        ]  # the greedy two do not depend on seed
        assert ids[2:] != [p.patch.identity for p in other[2:] if p.patch]
        for p in proposals:
            assert p.patch is not None
            used = [o["name"] for o in p.meta["operators"]]
            assert 1 <= len(used) <= 3 and len(set(used)) == len(used)
            assert all(get_operator(name).applies_to(env) for name in used)
            assert p.patch.metadata["operators"] == p.meta["operators"]
            # the raw reply is a Harness-R1 reply that parses back to the same patch (an SFT target)
            assert (
                p.raw_reply.startswith("<think>\n")
                and '"schema_version": "harness-r1-patch-v1"' in p.raw_reply
            )
            assert extract_patch(p.raw_reply).identity == p.patch.identity
            assert f"{packet.header.failures_found} of {packet.row.batch_size}" in p.raw_reply
        top = max(proposals[0].meta["scores"].items(), key=lambda kv: kv[1])[0]
        assert [o["name"] for o in proposals[0].meta["operators"]] == [top]


def test_operator_proposals_fix_the_failures_they_were_drawn_from(packets: dict[str, Any]) -> None:
    """The greedy proposal for the hasty-shopper packet raises the reward of those very episodes."""
    proposal = asyncio.run(OperatorEngineer().propose(packets["shop"], 1))[0]
    assert proposal.patch is not None
    before = [episode("shop", EnvAgent(hasty_shopper), task=t, seed=t).score for t in range(6)]
    after = [episode("shop", EnvAgent(hasty_shopper), proposal.patch, task=t, seed=t).score for t in range(6)]
    assert sum(after) > sum(before) and all(a >= b for a, b in zip(after, before, strict=True))


def misquoting(env: Any, request: Any, i: int) -> str:
    """The expert's query, then an answer that misquotes its result — unless a block offers one to copy."""
    seen = request.messages[-1].content
    if "Final Answer: [" in seen and i > 0:
        return "Action: Answer\nFinal Answer: [" + seen.split("Final Answer: [", 1)[1].split("\n")[0]
    expert = env.expert_action()
    return answer('["misquoted 0"]') if "Final Answer" in expert else expert


def test_answer_grounding_offers_the_last_result_for_a_misquoted_answer() -> None:
    patch = get_operator("answer_grounding").build({}, "db")
    for task in range(40):  # a question whose expert answers straight from one query's values
        plain = episode("db", EnvAgent(misquoting), task=task, split="train")
        if plain.num_steps == 2 and not plain.success:
            break
    else:
        pytest.fail("no db train task among the first 40 answers from a single query")
    patched = episode("db", EnvAgent(misquoting), patch, task=task, split="train")
    assert not plain.success
    blocked = patched.steps[1]
    assert "blocked" in blocked.flags
    assert blocked.observation.startswith("Not valid: the answer does not quote the last query's result.")
    assert patched.success  # copying the offered result answers the question
    # a correct answer is never blocked
    expert = EnvAgent(lambda env, request, i: env.expert_action())
    right = episode("db", expert, patch, task=task, split="train")
    assert right.success and not any("blocked" in step.flags for step in right.steps)


def first_task_of(task_type: str, split: str = "test") -> int:
    env = make_env("db", split=split)
    for index in range(200):
        if env.get_task(index).task_type == task_type:
            return index
    raise AssertionError(f"no {task_type} task among the first 200")


def dropped_value(env: Any, request: Any, i: int) -> str:
    """The expert's INSERT with its last value missing, then the expert."""
    expert = env.expert_action()
    if i > 0:
        return expert
    statement = expert.split("```sql\n", 1)[1].split("\n```", 1)[0]
    return sql(statement.rsplit(", ", 1)[0] + ")")


def test_sql_guard_blocks_a_visibly_broken_statement_before_it_runs() -> None:
    task = first_task_of("INSERT")
    patch = get_operator("sql_guard").build({}, "db")
    plain = episode("db", EnvAgent(dropped_value), task=task)
    patched = episode("db", EnvAgent(dropped_value), patch, task=task)
    columns = len(make_env("db", split="test").get_task(task).state["table"]["columns"])
    assert plain.steps[0].observation == f"{columns - 1} values for {columns} columns"  # the env's error
    assert "blocked" in patched.steps[0].flags
    assert patched.steps[0].observation == f"Blocked: {columns - 1} values for {columns} columns."
    assert plain.success and patched.success  # the expert recovers either way


def test_sql_guard_never_blocks_the_experts_statements() -> None:
    patch = get_operator("sql_guard").build({"list": True}, "db")
    expert = EnvAgent(lambda env, request, i: env.expert_action())
    for task in range(0, 60, 4):
        record = episode("db", expert, patch, task=task, limits=INPROCESS)
        assert record.success and not any("blocked" in step.flags for step in record.steps), task


def failed_then_answer(env: Any, request: Any, i: int) -> str:
    """A good query, a broken one, an answer right after the failure, then the expert."""
    table = env.task.state["table"]["name"]
    script = {0: sql(f"SELECT COUNT(*) FROM `{table}`"), 1: sql(f"SELECT `nope` FROM `{table}`")}
    return script.get(i) or (answer('["0"]') if i == 2 else env.expert_action())


def test_answer_guard_blocks_an_answer_right_after_a_failed_statement() -> None:
    task = first_task_of("other")
    plain = episode("db", EnvAgent(failed_then_answer), task=task)
    patched = episode(
        "db", EnvAgent(failed_then_answer), get_operator("answer_guard").build({}, "db"), task=task
    )
    without = get_operator("answer_guard").build({"after_error": False}, "db")
    unguarded = episode("db", EnvAgent(failed_then_answer), without, task=task)
    assert plain.num_steps == 3 and not plain.success
    assert patched.steps[2].observation.startswith("Not answering yet: the last SQL statement failed")
    assert patched.success
    assert unguarded.num_steps == 3 and not unguarded.success  # one query had succeeded: nothing to block


def test_sql_guard_blocks_a_statement_the_question_contradicts() -> None:
    task = first_task_of("aggregation-MAX")
    env = make_env("db", split="test")
    env.reset(options={"task": task})
    reference = env.expert_action()
    assert "MAX(" in reference

    def opposite(env: Any, request: Any, i: int) -> str:
        return reference.replace("MAX(", "MIN(") if i == 0 else env.expert_action()

    plain = episode("db", EnvAgent(opposite), task=task)
    patched = episode("db", EnvAgent(opposite), get_operator("sql_guard").build({}, "db"), task=task)
    no_intent = get_operator("sql_guard").build({"intent": False}, "db")
    unchecked = episode("db", EnvAgent(opposite), no_intent, task=task)
    assert plain.steps[0].observation.startswith("[(")  # the wrong aggregate runs and returns a value
    assert patched.steps[0].observation == (
        "Blocked: the question asks for the highest value, but the query takes MIN."
    )
    assert not any("blocked" in step.flags for step in unchecked.steps)


def test_sql_guard_names_the_same_question_contradictions_as_the_demos() -> None:
    """The hook embeds the rule table of :mod:`reharness.kits.db.intent`; it must judge like the module."""
    from reharness.kits.db.intent import intent_problem
    from reharness.patches.sandbox.supervisor import HookWorker

    cases = [
        ("SELECT MIN(CAST(`Gold` AS SIGNED)) FROM `T`", "What is the highest Gold?"),
        ("SELECT MAX(CAST(`Gold` AS SIGNED)) FROM `T`", "What is the highest Gold?"),
        (
            "SELECT `Nation` FROM `T` ORDER BY CAST(`Gold` AS SIGNED) ASC LIMIT 1",
            "Which Nation has the most Gold?",
        ),
        (
            "SELECT `Nation` FROM `T` ORDER BY CAST(`Gold` AS SIGNED) DESC LIMIT 1",
            "the lowest or highest Gold?",
        ),
        ("SELECT SUM(CAST(`Gold` AS SIGNED)) FROM `T`", "What is the average Gold?"),
        ("SELECT AVG(CAST(`Gold` AS SIGNED)) FROM `T`", "What is the total Gold?"),
        ("SELECT `Nation` FROM `T` WHERE `nation` = 'Peru'", "What Gold has a Nation of Peru?"),
        ("SELECT `Gold` FROM `T` WHERE `Nation` = 'Peru'", "What Gold has a Nation of Peru?"),
    ]
    worker = HookWorker(dict(get_operator("sql_guard").build({}, "db").hooks), INPROCESS)
    try:
        for statement, question in cases:
            ctx = {"action": {"text": sql(statement)}, "task": {"instruction": question}}
            effect = worker.call("before_action", ctx, {}).value
            expected = intent_problem(statement, question)
            assert (effect or {}).get("message") == (expected and f"Blocked: {expected}."), statement
    finally:
        worker.close()
    flagged = [intent_problem(s, q) is not None for s, q in cases]  # both verdicts are exercised
    assert flagged == [True, False, True, False, True, True, True, False]


def hasty_coder(env: Any, request: Any, i: int) -> str:
    """Submits at once; after a block ("Not submitting yet") it follows the solver, skipping its test run."""
    if not any("Not submitting yet" in str(m.content) for m in request.messages):
        return "submit"
    action = env.expert_action()
    return "submit" if action.startswith("run_tests") else action


def clumsy_coder(env: Any, request: Any, i: int) -> str:
    """First an edit whose old text is not in the file (wrong indentation), then the solver's actions."""
    if i == 0:
        path = next(p for p in sorted(env.workspace.files()) if p.endswith(".py") and "tests" not in p)
        return f"str_replace {path}\n<<<<<<< SEARCH\nreturn  value\n=======\nreturn value\n>>>>>>> REPLACE"
    return env.expert_action()


def test_submit_guard_turns_a_hasty_submit_into_a_resolved_one() -> None:
    patch = get_operator("submit_guard").build({}, "code")
    for task in range(3):
        plain = episode("code", EnvAgent(hasty_coder), task=task)
        patched = episode("code", EnvAgent(hasty_coder), patch, task=task, limits=INPROCESS)
        assert not plain.success and "tests_failing" in failure_codes(plain)
        assert "premature_answer" in failure_codes(plain)
        assert patched.success and any(s.effects for s in patched.steps)


def test_edit_error_hint_explains_a_refused_edit() -> None:
    patch = get_operator("edit_error_hint").build({}, "code")
    plain = episode("code", EnvAgent(clumsy_coder), task=0)
    patched = episode("code", EnvAgent(clumsy_coder), patch, task=0, limits=INPROCESS)
    assert "edit_error" in failure_codes(plain.model_copy(update={"success": False}))
    assert plain.steps[0].observation.startswith("Error: old text not found")
    hints = [e for e in patched.steps[0].effects if "The edit failed" in str(e)]
    assert hints and "copy the old text exactly" in str(hints[0])

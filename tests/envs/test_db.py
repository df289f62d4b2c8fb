"""Tests of the db env (DBBench on SQLite): generator, protocols, graders, MySQL layer, sandbox, real data."""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path

import pytest

from reharness.core.errors import DataError, EnvError
from reharness.envs.registry import make_env
from reharness.kits.db import DBEnv, SqlSandbox, load_dbbench
from reharness.kits.db.grading import grade_fc, grade_v02, parse_answer_md5, table_hash
from reharness.kits.db.protocol import parse_action

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "dbbench"
needs_data = pytest.mark.skipif(not (DATA / "dev.jsonl").is_file(), reason="DBBench data files not present")


def run(env: DBEnv, policy, task, seed: int = 0) -> dict:
    env.reset(seed=seed, options={"task": task})
    info: dict = {}
    done = False
    while not done:
        _, _, term, trunc, info = env.step(policy())
        done = term or trunc
    return info


@pytest.fixture(scope="module")
def test_env() -> DBEnv:
    return DBEnv(split="test")


@pytest.fixture
def sandbox() -> SqlSandbox:
    sb = SqlSandbox("Club Stats")
    rows = [
        ["Atlético Madrid", "100", "12,345", "45.5%", "2–1"],
        ["FC Köln", "50", "9,999", "3%", "0–0"],
        ["Zürich", "9", "100,000", "12.25%", None],
    ]
    sb.create_table("Club Stats", ["Club", "Points", "Attendance", "Share", "1st leg"], rows)
    return sb


# ---------------------------------------------------------------------------------------------- generation
def test_registered_and_constructible() -> None:
    env = make_env("db", split="valid")
    assert isinstance(env, DBEnv) and env.split == "valid" and env.max_steps == 20
    assert DBEnv(protocol="fc").max_steps == 15
    assert DBEnv.honoured_effects == frozenset({"block", "hint"})
    with pytest.raises(EnvError, match="unknown protocol"):
        DBEnv(protocol="v3")
    with pytest.raises(EnvError, match="unknown split"):
        DBEnv(split="dev")


def test_generation_is_deterministic(test_env: DBEnv) -> None:
    other = DBEnv(split="test")
    for i in range(25):
        a, b = test_env.get_task(i), other.get_task(i)
        assert a == b
        json.dumps(dict(a.state)), json.dumps(dict(a.gold))
    obs = []
    for env in (test_env, other):
        rng = random.Random(3)
        env.reset(seed=1, options={"task": 4})
        obs.append([env.step(env.random_action(rng))[0] for _ in range(3) if not env.done])
    assert obs[0] == obs[1]


def test_splits_are_disjoint() -> None:
    hashes = {}
    for split in ("train", "valid", "test"):
        env = DBEnv(split=split)
        hashes[split] = {env.get_task(i).content_hash() for i in range(200)}
        assert len(hashes[split]) == 200
    assert not hashes["train"] & hashes["valid"]
    assert not hashes["train"] & hashes["test"]
    assert not hashes["valid"] & hashes["test"]


def test_all_task_types_and_encodings_appear(test_env: DBEnv) -> None:
    tasks = [test_env.get_task(i) for i in range(200)]
    assert {t.task_type for t in tasks} == {
        "other", "counting", "comparison", "ranking", "aggregation-SUM", "aggregation-MIN",
        "aggregation-MAX", "aggregation-AVG", "INSERT", "UPDATE",
    }  # fmt: skip
    cells = " ".join(str(v) for t in tasks for row in t.state["table"]["rows"] for v in row)
    assert "," in cells and "%" in cells and "$" in cells and any(c in cells for c in "éñüø")
    for t in tasks:
        if t.task_type in ("INSERT", "UPDATE"):
            assert t.gold["label"] is None and len(t.gold["answer_md5"]) == 32 and t.gold["sql"]
        else:
            assert t.gold["label"] and t.gold["answer_md5"] is None


def test_expert_solves_every_test_task(test_env: DBEnv) -> None:
    results = [run(test_env, test_env.expert_action, i)["success"] for i in range(200)]
    assert sum(results) == 200


def test_expert_under_fc_protocol() -> None:
    env = DBEnv(split="test", protocol="fc")
    assert all(run(env, env.expert_action, i)["success"] for i in range(40))


def test_perturbed_expert_still_succeeds(test_env: DBEnv) -> None:
    rng = random.Random(7)

    def policy() -> str:
        return test_env.random_action(rng) if rng.random() < 0.15 else test_env.expert_action()

    wins = sum(run(test_env, policy, i)["success"] for i in range(200))
    assert wins == 185  # seeded: the exact figure, so a drop of one recovery is noticed


def test_random_agent_rarely_succeeds(test_env: DBEnv) -> None:
    rng = random.Random(11)
    wins = [i for i in range(200) if run(test_env, lambda: test_env.random_action(rng), i)["success"]]
    assert wins == []  # seeded: not one of the 200 tasks falls to random SQL


def test_expert_recovers_a_damaged_table(test_env: DBEnv) -> None:
    index = next(i for i in range(50) if test_env.get_task(i).task_type in ("INSERT", "UPDATE"))
    test_env.reset(seed=0, options={"task": index})
    name = test_env.task.state["table"]["name"]
    test_env.step(
        f"Action: Operation\n```sql\nDELETE FROM `{name}` LIMIT 3\n```"
    )  # error: SQLite has no LIMIT
    test_env.step(
        f"Action: Operation\n```sql\nINSERT INTO `{name}` (`{test_env.tracker.columns[0]}`) VALUES ('x')\n```"
    )
    test_env.step(f"Action: Operation\n```sql\nALTER TABLE `{name}` RENAME TO gone\n```")
    done, info = False, {}
    while not done:
        _, _, term, trunc, info = test_env.step(test_env.expert_action())
        done = term or trunc
    assert info["success"]


# ---------------------------------------------------------------------------------------------- protocol
def test_initial_observation_follows_agentbench(test_env: DBEnv) -> None:
    obs, info = test_env.reset(seed=0, options={"task": 0})
    task = test_env.task
    assert obs.startswith("I will ask you a question, then you should help me operate a MySQL database")
    assert obs.endswith(task.state["description"] + "\n" + task.state["add_description"])
    assert task.state["add_description"].startswith(
        f"The name of this table is {task.state['table']['name']},"
    )
    assert info["tools"][0]["function"]["name"] == "execute_sql"
    fc = DBEnv(split="test", protocol="fc")
    obs, _ = fc.reset(seed=0, options={"task": 0})
    assert "`commit_final_answer` function" in obs and obs.endswith("Question: " + task.state["description"])
    obs, *_, info = fc.step("The answer is 3")
    assert info["invalid_action"] and "no tool call found" in obs


def test_action_grammar(test_env: DBEnv) -> None:
    assert (
        parse_action("Let me look.\nAction: Operation\n```sql\nSELECT 1\nFROM t\n```").sql
        == "SELECT 1 FROM t"
    )
    two = parse_action("Action: Operation\n```sql\nSELECT 1\n```\n```sql\nSELECT 2\n```")
    assert two.kind == "sql" and two.sql == "SELECT 1"
    assert parse_action("Action: Operation\nSELECT 1").kind == "invalid"
    assert parse_action('Action: Answer\nFinal Answer: ["a"]').answer_raw == ' ["a"]'
    assert parse_action('thinking\nFinal Answer: ["a"]').kind == "answer"
    assert parse_action("SELECT * FROM t").kind == "invalid"

    test_env.reset(seed=0, options={"task": 0})
    obs, reward, term, trunc, info = test_env.step("I think the answer is 3")
    assert info["invalid_action"] and not term and reward == 0.0
    assert "Action: Operation" in obs and "Final Answer" in obs
    obs, *_, info = test_env.step("Action: Operation\n```sql\nSELEC 1\n```")
    assert "syntax error" in obs and not info["invalid_action"]
    name = test_env.task.state["table"]["name"]
    obs, *_ = test_env.step(f"Action: Operation\n```sql\nSELECT * FROM `{name}` t1, `{name}` t2\n```")
    assert obs.endswith("[TRUNCATED]") and len(obs) == 800 + len("[TRUNCATED]")
    obs, reward, term, _, info = test_env.step('Action: Answer\nFinal Answer: ["definitely wrong"]')
    assert term and reward == 0.0 and not info["success"] and "incorrect" in obs


def test_tool_calls_round_trip(test_env: DBEnv) -> None:
    names = [t["function"]["name"] for t in test_env.tools()]
    assert names == ["execute_sql", "commit_final_answer"]
    action = test_env.action_from_tool_call("execute_sql", {"query": "SELECT 1"})
    assert action == "Action: Operation\n```sql\nSELECT 1\n```"
    assert test_env.tool_call_from_action(action) == ("execute_sql", {"query": "SELECT 1"})
    answer = test_env.action_from_tool_call("commit_final_answer", {"answers": ["Zürich", 'say "hi"']})
    assert test_env.tool_call_from_action(answer) == (
        "commit_final_answer",
        {"answers": ["Zürich", 'say "hi"']},
    )
    for bad in [("execute_sql", {}), ("commit_final_answer", {"answers": 3}), ("drop_db", {})]:
        with pytest.raises(ValueError):
            test_env.action_from_tool_call(*bad)
    with pytest.raises(ValueError):
        test_env.tool_call_from_action("hello")


def test_step_limits_and_mutation_grading_without_answer() -> None:
    for protocol, expect in (("v0.2", True), ("fc", False)):
        env = DBEnv(split="test", protocol=protocol, max_steps=2)
        index = next(i for i in range(50) if env.get_task(i).task_type == "INSERT")
        env.reset(seed=0, options={"task": index})
        env.step(env.expert_action())  # the INSERT
        _, reward, term, trunc, info = env.step("Action: Operation\n```sql\nSELECT 1\n```")
        assert trunc and not term and info["success"] is expect and reward == float(expect)


def test_runtime_state_and_task_fields(test_env: DBEnv) -> None:
    index = next(i for i in range(50) if test_env.get_task(i).task_type == "other")
    test_env.reset(seed=0, options={"task": index})
    table = test_env.task.state["table"]
    col = table["columns"][1]
    fields = test_env.task_fields()
    assert fields["answer_shape"] == "single" and fields["target_table"] == table["name"]
    assert "label" not in json.dumps(fields)
    for sql in (
        "SELECT nope FROM t",
        "SELECT nope FROM t",
        f"SELECT `{col}` FROM `{table['name']}` WHERE 1 = 0",
    ):
        test_env.step(f"Action: Operation\n```sql\n{sql}\n```")
    state = test_env.runtime_state()
    json.dumps(state)
    assert state["round"] == 3 and state["sql_history"][0] == "SELECT nope FROM t"
    s = state["state"]
    assert s["sql_count"] == 3 and s["error_streak"] == 0 and s["empty_streak"] == 1 and s["loop_streak"] == 0
    assert state["discovered_columns"] == [col] and s["last_error_kind"] == "none"
    test_env.step("Action: Operation\n```sql\nSELECT nope FROM t\n```")
    test_env.step("Action: Operation\n```sql\nSELECT  nope FROM t;\n```")
    s = test_env.runtime_state()["state"]
    assert s["error_streak"] == 2 and s["loop_streak"] == 1 and s["last_error_kind"] == "no_such_table"
    test_env.step(f"Action: Operation\n```sql\nDESCRIBE `{table['name']}`\n```")
    test_env.step(f"Action: Operation\n```sql\nSELECT COUNT(*) FROM `{table['name']}`\n```")
    state = test_env.runtime_state()
    assert state["discovered_columns"][0] == col and set(state["discovered_columns"]) == set(table["columns"])
    assert state["state"]["candidate_answer"] == [str(len(table["rows"]))]


# ---------------------------------------------------------------------------------------------- graders
def test_v02_grader() -> None:
    assert grade_v02(' ["3"]', ["3.0"]) and grade_v02(" [3]", ["3"]) and grade_v02(' "7"', ["7"])
    assert grade_v02(' ["b", "a"]', ["a", "b"]) and not grade_v02(' ["a"]', ["a", "b"])
    assert grade_v02(' ["Zürich"]', ["Zürich"]) and not grade_v02(' ["zurich"]', ["Zürich"])
    assert not grade_v02(" [1,234]", ["1,234"]) and grade_v02(" Paris", [" Paris"])
    assert not grade_v02(" [[1]]", ["1"]) and not grade_v02("__import__('os')", ["0"])


def test_fc_grader() -> None:
    assert grade_fc(["1,234"], ["1234"]) and grade_fc(["45%"], ["45"]) and grade_fc(["'x'"], ["x"])
    assert grade_fc([None], ["0"]) and grade_fc(["null"], [""]) and grade_fc(["3.004"], ["3"])
    assert not grade_fc(["3.02"], ["3"]) and grade_fc(["2", "1.001"], ["1", "2"])
    assert not grade_fc(["1", "1"], ["1", "2"]) and grade_fc(["b", "a"], ["a", "b"])
    assert grade_fc("[('5',)]", ["5"]) and grade_fc("Paris", ["Paris"])


def test_table_hash_matches_agentbench_definition() -> None:
    rows = [("a", None, "1"), ("b", "2", "3")]
    parts = sorted(hashlib.md5(s.encode()).hexdigest()[:5] for s in ("a,1", "b,2,3"))
    assert table_hash(rows) == hashlib.md5(",".join(parts).encode()).hexdigest()
    assert table_hash([]) is None
    assert parse_answer_md5("[('09AA8fbf72f39362970f95a1276b957c',)]") == "09aa8fbf72f39362970f95a1276b957c"
    assert parse_answer_md5("") is None
    with pytest.raises(ValueError):
        parse_answer_md5("[('nothex',)]")


# ---------------------------------------------------------------------------------------------- MySQL layer
@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT Club FROM `Club Stats` WHERE Club = 'atletico madrid'", "[('Atlético Madrid',)]"),
        ("SELECT Club FROM `Club Stats` WHERE Club LIKE '%KOLN'", "[('FC Köln',)]"),
        ('SELECT Club FROM `Club Stats` WHERE Club = "ZURICH"', "[('Zürich',)]"),
        (
            "SELECT Club FROM `Club Stats` WHERE Points > 20 ORDER BY Club",
            "[('Atlético Madrid',), ('FC Köln',)]",
        ),
        ("SELECT COUNT(*) FROM `Club Stats` WHERE Points BETWEEN 10 AND 60", "[(1,)]"),
        ("SELECT Club FROM `Club Stats` WHERE Attendance > 10000", "[]"),
        ("SELECT MAX(Points) FROM `Club Stats`", "[('9',)]"),
        ("SELECT SUM(REPLACE(Attendance, ',', '') + 0) FROM `Club Stats`", "[(122344,)]"),
        ("SELECT Club FROM `Club Stats` ORDER BY Club DESC LIMIT 1", "[('Zürich',)]"),
        ("SELECT COUNT(DISTINCT Club) FROM `Club Stats` WHERE Club REGEXP '^(fc|zü)'", "[(2,)]"),
        (
            "SELECT md5('a'), concat('a', 1, 'b'), concat('a', NULL), concat_ws('-', 'a', NULL, 'b')",
            "[('0cc175b9c0f1b6a831c399e269772661', 'a1b', None, 'a-b')]",
        ),
        (
            "SELECT IF(1 > 2, 'y', 'n'), LEFT('abcdef', 2), RIGHT('abcdef', 2), 10 / 4",
            "[('n', 'ab', 'ef', 2.5)]",
        ),
        (
            "SELECT 'it\\'s', 'a\\\\b', 'x''y', \"q\\\"q\", 'l1\\nl2'",
            "[(\"it's\", 'a\\\\b', \"x'y\", 'q\"q', 'l1\\nl2')]",
        ),
        ("SELECT `1st leg` FROM `Club Stats` WHERE `1st leg` IS NOT NULL LIMIT 1", "[('2–1',)]"),
        ("SELECT 1 || 0, 1 && 0 # a comment", "[(1, 0)]"),
        ("SHOW TABLES", "[('Club Stats',)]"),
        ("SELECT DATABASE()", "[('Club Stats',)]"),
    ],
)
def test_mysql_semantics(sandbox: SqlSandbox, sql: str, expected: str) -> None:
    result = sandbox.execute(sql)
    assert result.ok, result.error
    assert result.text == expected


def test_describe_and_show_columns(sandbox: SqlSandbox) -> None:
    expected = ("Club", "text", "YES", "", None, "")
    for sql in ("DESCRIBE `Club Stats`", "DESC `Club Stats`", "SHOW COLUMNS FROM `Club Stats`"):
        result = sandbox.execute(sql)
        assert result.rows is not None and result.rows[0] == expected and len(result.rows) == 5
    assert sandbox.execute("SHOW FULL COLUMNS FROM `Club Stats` LIKE 'P%'").rows[0][:3] == (
        "Points", "text", "utf8mb4_0900_ai_ci",
    )  # fmt: skip
    assert "CREATE TABLE `Club Stats`" in sandbox.execute("SHOW CREATE TABLE `Club Stats`").text
    assert sandbox.execute("DESCRIBE nope").error_kind == "no_such_table"


def test_mutations_keep_mysql_text(sandbox: SqlSandbox) -> None:
    assert sandbox.execute("UPDATE `Club Stats` SET Share = 5.50 WHERE Club = 'zurich'").ok
    assert sandbox.execute("INSERT INTO `Club Stats` VALUES ('Neu', 1.10, '0', -2.50, 'it\\'s')").ok
    rows = sandbox.execute("SELECT Share, Points FROM `Club Stats` WHERE Club IN ('Zürich', 'Neu')").rows
    assert rows == [("5.50", "9"), ("-2.50", "1.10")]
    sb = SqlSandbox("1952_British_Grand_Prix_0")
    sb.create_table("1952_British_Grand_Prix_0", ["Pos", "Driver"], [["1", "Ascari"]])
    assert sb.execute("INSERT INTO 1952_British_Grand_Prix_0 (Pos, Driver) VALUES (22, 'Tony Gaze')").ok
    assert sb.execute("SELECT COUNT(*) FROM 1952_British_Grand_Prix_0").rows == [(2,)]


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", "timeout"),
        (
            "SELECT count(*) FROM " + ", ".join(f"`Club Stats` t{i}" for i in range(20)),
            "timeout",
        ),
        ("ATTACH DATABASE '/tmp/reharness_db_test' AS y", "forbidden"),
        ("SELECT load_extension('x')", "forbidden"),
        ("SELECT randomblob(1e9)", "forbidden"),
        ("SELECT length(printf('%.*c', 1000000000, 'x'))", "forbidden"),
        ("SELECT zeroblob(1e9)", "resource_limit"),
        ("SELECT length(repeat('x', 1000000000))", "resource_limit"),
        ("PRAGMA writable_schema = 1", "forbidden"),
        ("VACUUM INTO '/tmp/reharness_db_test.db'", "forbidden"),
        ("CREATE VIRTUAL TABLE v USING fts5(x)", "forbidden"),
        ("SELECT 1; DROP TABLE `Club Stats`", "syntax_error"),
        ("SELECT 'unterminated", "syntax_error"),
        (
            "CREATE TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
            "WHERE x < 300000) SELECT x, zeroblob(2000) AS z FROM c",
            "resource_limit",
        ),
    ],
)
def test_hostile_sql_ends_the_step_with_an_error(sandbox: SqlSandbox, sql: str, kind: str) -> None:
    start = time.monotonic()
    result = sandbox.execute(sql)
    assert time.monotonic() - start < 3.0
    assert not result.ok and result.error_kind == kind, result.error
    assert sandbox.execute("SELECT COUNT(*) FROM `Club Stats`").rows == [(3,)]
    assert not Path("/tmp/reharness_db_test").exists() and not Path("/tmp/reharness_db_test.db").exists()


def test_hostile_sql_through_the_env(test_env: DBEnv) -> None:
    test_env.reset(seed=0, options={"task": 1})
    obs, _, term, _, info = test_env.step(
        "Action: Operation\n```sql\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
        "SELECT count(*) FROM c\n```"
    )
    assert obs == "Query timed out" and not term and info["error_kind"] == "timeout"
    assert test_env.runtime_state()["state"]["last_error_kind"] == "timeout"


# ---------------------------------------------------------------------------------------------- real files
@needs_data
@pytest.mark.parametrize(
    ("name", "min_mutations"), [("dev.jsonl", 40), ("standard-v0.2.jsonl", 194), ("standard-fc.jsonl", 194)]
)
def test_gold_agent_on_real_files(name: str, min_mutations: int) -> None:
    env = DBEnv(data_path=DATA / name)
    assert env.available_splits() == ("data",) and env.split == "data"
    wins = {"select": 0, "mutation": 0}
    totals = {"select": 0, "mutation": 0}
    for i in range(env.num_tasks()):
        kind = "mutation" if env.get_task(i).task_type in ("INSERT", "UPDATE") else "select"
        totals[kind] += 1
        wins[kind] += run(env, env.gold_action, i)["success"]
    assert wins["select"] == totals["select"]
    assert wins["mutation"] >= min_mutations


@needs_data
def test_real_file_tasks_and_ids() -> None:
    env = DBEnv(data_path=DATA / "dev.jsonl", protocol="fc")
    task = env.task_by_id("dbbench/dev/0")
    assert task.task_type == "other" and task.gold["label"] == ["March 19, 1998"]
    obs, info = env.reset(seed=0, options={"task": "dbbench/dev/0"})
    assert "US Ambassadors and Envoy Extraordinary to Colombia" in obs and info["task_id"] == "dbbench/dev/0"
    assert env.get_task(5).state["table"]["columns"][0] == "column_1"  # empty header repaired
    with pytest.raises(EnvError):
        env.task_by_id("dbbench/dev/999")
    with pytest.raises(EnvError):
        env.get_task(60)
    with pytest.raises(EnvError):
        DBEnv(data_path=DATA / "dev.jsonl", split="test")


def test_loader_errors_name_line_and_field(tmp_path: Path) -> None:
    good = {
        "description": "How many?",
        "type": ["counting"],
        "label": ["1"],
        "table": {
            "table_name": "t",
            "table_info": {"columns": [{"name": "a", "type": "TEXT"}], "rows": [["x"]]},
        },
    }
    info = good["table"]["table_info"]  # type: ignore[index]
    cases = [
        ("{not json", "line 1: invalid JSON"),
        (json.dumps({**good, "description": ""}), "'description'"),
        (json.dumps({**good, "type": ["JOIN"]}), "'type'"),
        (json.dumps({**good, "table": {"table_name": "t"}}), "'table.table_info'"),
        (json.dumps({**good, "table": {"table_name": "t", "table_info": {**info, "rows": [["x", "y"]]}}}),
         "'table.table_info.rows[0]'"),
        (json.dumps({**good, "type": ["INSERT"], "answer_md5": "[('zz',)]"}), "'answer_md5'"),
        (json.dumps({**good, "label": "1"}), "'label'"),
    ]  # fmt: skip
    for text, needle in cases:
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(good) + "\n" + text + "\n" if "line 1" not in needle else text + "\n")
        with pytest.raises(DataError) as err:
            load_dbbench(path)
        assert needle in str(err.value) and "bad.jsonl" in str(err.value)
    with pytest.raises(DataError, match="not found"):
        load_dbbench(tmp_path / "missing.jsonl")
    path = tmp_path / "mine.jsonl"
    mutation = {**good, "type": ["INSERT"], "label": ["INSERT INTO t (a) VALUES ('y')"]}
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(mutation) + "\n")
    tasks = load_dbbench(path)
    assert [t.task_id for t in tasks] == ["dbbench/mine/0", "dbbench/mine/2"]
    assert tasks[1].gold["answer_md5"] == table_hash([("x",), ("y",)])

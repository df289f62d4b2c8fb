"""Near-miss SQL perturbations and observed harness notes in db demonstrations."""

from __future__ import annotations

import random

from reharness.kits.db.near_miss import split_top_level, sql_near_miss
from reharness.kits.db.notes import sql_problem
from reharness.kits.db.protocol import parse_action
from reharness.training.tiny.demos import render_demos
from reharness.training.tiny.interventions import InterventionRates, compact

COLUMNS = ["Rank", "Nation", "Gold", "Area (km²)"]
INSERT = (
    "INSERT INTO `Medals` (`Rank`, `Nation`, `Gold`, `Area (km²)`) VALUES ('1', 'O''Brien, Kenya', '34', '5')"
)
UPDATE = "UPDATE `Medals` SET `Gold` = '3' WHERE `Nation` = 'Kenya'"
SELECT = "SELECT `Gold` FROM `Medals` WHERE `Nation` = 'Kenya'"


def test_values_split_at_top_level_commas_only() -> None:
    assert split_top_level("'1', 'O''Brien, Kenya', '34'") == ["'1'", "'O''Brien, Kenya'", "'34'"]


def test_near_misses_break_one_part_of_the_statement() -> None:
    rng = random.Random(0)
    inserts = {sql_near_miss(INSERT, COLUMNS, rng) for _ in range(30)}
    assert inserts and None not in inserts
    for sql in inserts:
        assert sql is not None and sql_problem(sql, COLUMNS) is not None  # a value dropped or doubled
        assert "values for 4 columns" in str(sql_problem(sql, COLUMNS))
    updates = {sql_near_miss(UPDATE, COLUMNS, rng) for _ in range(30)}
    assert "UPDATE `Medals` WHERE `Nation` = 'Kenya'" in updates  # the SET clause lost
    assert UPDATE + " WHERE `Nation` = 'Kenya'" in updates  # the WHERE clause written twice
    selects = {sql_near_miss(SELECT, COLUMNS, rng) for _ in range(60)}
    assert "SELECT `Rank` FROM `Medals` WHERE `Nation` = 'Kenya'" in selects  # a wrong, valid column
    assert "SELECT `Gol` FROM `Medals` WHERE `Nation` = 'Kenya'" in selects  # a misspelled one
    assert SELECT not in selects
    assert sql_near_miss("SHOW TABLES", COLUMNS, rng) is None
    first = [sql_near_miss(SELECT, COLUMNS, random.Random(5)) for _ in range(3)]
    assert len(set(first)) == 1  # a pure function of the generator


def test_sql_problem_names_visible_defects_and_accepts_good_statements() -> None:
    assert sql_problem(INSERT, COLUMNS) is None
    assert sql_problem(UPDATE, COLUMNS) is None
    assert sql_problem(SELECT, COLUMNS) is None
    assert sql_problem("UPDATE `Medals` WHERE `Nation` = 'x'", COLUMNS) == (
        "an UPDATE needs SET `column` = 'value' before WHERE"
    )
    assert sql_problem(SELECT + " WHERE `Nation` = 'x'", COLUMNS) == "a clause is written twice"
    assert sql_problem("SELECT `Silver` FROM `Medals`", COLUMNS) == "there is no column `Silver`"


def test_without_near_misses_db_demos_are_unchanged() -> None:
    plain, _ = render_demos("db", 6, seed=4, perturb_prob=0.3)
    again, _ = render_demos("db", 6, seed=4, perturb_prob=0.3, near_miss=0.0)
    assert [d.messages for d in plain] == [d.messages for d in again]


def test_near_miss_demos_show_the_error_then_the_corrected_statement() -> None:
    demos, stats = render_demos("db", 12, seed=1, perturb_prob=0.5, near_miss=1.0)
    errors = 0
    for demo in demos:
        turns = [i for i, m in enumerate(demo.messages) if m.role == "assistant"]
        for k, index in enumerate(turns[:-1]):
            if demo.supervised[k]:
                continue
            perturbed = parse_action(demo.messages[index].content)
            if perturbed.kind != "sql":
                continue
            feedback = demo.messages[index + 1].content
            errors += any(word in feedback for word in ("syntax error", "no such column", "values for"))
    assert errors >= 3
    assert stats.successes == stats.episodes  # the expert always recovers


def test_observed_notes_never_quote_the_experts_next_statement() -> None:
    rates = InterventionRates(after_perturbed=1.0, premature_after_error=1.0, reminder=0.0, observed=True)
    demos, _ = render_demos("db", 16, seed=2, perturb_prob=0.5, interventions=rates, near_miss=1.0)
    again, _ = render_demos("db", 16, seed=2, perturb_prob=0.5, interventions=rates, near_miss=1.0)
    assert [(d.messages, d.supervised) for d in demos] == [(d.messages, d.supervised) for d in again]
    notes = blocks = premature = 0
    for demo in demos:
        turns = [i for i, m in enumerate(demo.messages) if m.role == "assistant"]
        for k, index in enumerate(turns[:-1]):
            feedback = demo.messages[index + 1].content
            expert = compact(demo.messages[turns[k + 1]].content)
            if "```sql" in demo.messages[turns[k + 1]].content:
                assert expert not in feedback  # no note hands the agent the statement to write
            notes += "[Harness]" in feedback
            blocks += feedback.startswith(("Blocked: ", "Not run: ", "That statement would fail: "))
            premature += "answer yet" in feedback or "answering yet" in feedback
    assert notes > 0 and blocks > 0 and premature > 0


def test_intent_problems_compare_the_statement_with_the_question() -> None:
    cols = ["Country", "Population"]
    maximum = "SELECT MAX(CAST(`Population` AS SIGNED)) FROM `T`"
    assert sql_problem(maximum, cols, "What is the largest Population?") is None
    assert "takes MAX" in str(sql_problem(maximum, cols, "What is the smallest Population?"))
    assert "takes MIN" in str(sql_problem(maximum.replace("MAX", "MIN"), cols, "the highest Population?"))
    ranked = "SELECT `Country` FROM `T` ORDER BY CAST(`Population` AS SIGNED) ASC LIMIT 1"
    assert "ascending" in str(sql_problem(ranked, cols, "Which Country has the highest Population?"))
    assert sql_problem(ranked, cols, "Which Country has the lowest Population?") is None
    same = "SELECT `Country` FROM `T` WHERE `Country` = 'Peru'"
    assert "filters on" in str(sql_problem(same, cols, "What Population has a Country of Peru?"))
    assert sql_problem(same.replace("`Country` FROM", "`Population` FROM"), cols, "What Population?") is None
    assert sql_problem(same, cols) is None  # without the question only the statement itself is checked


def test_intent_near_misses_swap_the_aggregate_order_or_returned_column() -> None:
    rng = random.Random(1)
    aggregate = "SELECT MAX(CAST(`Gold` AS SIGNED)) FROM `Medals` WHERE `Nation` = 'Kenya'"
    seen = {sql_near_miss(aggregate, COLUMNS, rng) for _ in range(80)}
    assert aggregate.replace("MAX", "MIN") in seen
    assert "SELECT `Nation` FROM `Medals` WHERE `Nation` = 'Kenya'" in {
        sql_near_miss(SELECT, COLUMNS, rng) for _ in range(80)
    }

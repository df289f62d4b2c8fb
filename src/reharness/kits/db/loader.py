"""Load real AgentBench DBBench task files (``dev.jsonl``, ``standard.jsonl``) into :class:`Task` records.

One JSON object per line: ``description``, ``type`` (``["counting"]`` …), ``table`` {``table_name``,
``table_info`` {``columns`` [{``name``, ``type``}], ``rows``}}, ``label`` (answers for select types; the
reference statement for INSERT/UPDATE), ``answer_md5`` (``"[('<hash>',)]"`` for mutations), ``sql``
{``query``} (select types; unreliable), ``add_description``. Every problem is a :class:`DataError` naming the
line and the field. As in AgentBench every column is created as TEXT; cells are stored as text (None stays
NULL). MySQL could not create some stored tables; they are repaired and the repair is recorded in
``state["table"]["repairs"]``: an empty column name becomes ``column_<n>``, a repeated one ``<name>_2``, and a
row shorter than the header is padded with NULLs (AgentBench's MySQL would have left these tables missing or
empty). A row longer than the header is an error. A mutation without a stored hash gets one by running its
reference statement on a fresh copy of the table (AgentBench FC does the same).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reharness.core.errors import DataError
from reharness.envs.base import Task
from reharness.kits.db.gold import MUTATIONS, TASK_TYPES, compute_gold
from reharness.kits.db.grading import parse_answer_md5
from reharness.kits.db.protocol import table_line

DATA_SPLIT = "data"
KNOWN_TYPES = (*TASK_TYPES, "DELETE")
_FORMAT_HINT = "each line must be an AgentBench DBBench entry; compare with data/dbbench/dev.jsonl"


def _fail(path: Path, line: int, field: str, problem: str) -> DataError:
    return DataError(f"{path.name} line {line}: field {field!r} {problem}", hint=_FORMAT_HINT)


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def _table(path: Path, line: int, entry: dict[str, Any]) -> dict[str, Any]:
    table = entry.get("table")
    if not isinstance(table, dict):
        raise _fail(path, line, "table", "must be an object with 'table_name' and 'table_info'")
    table_name = table.get("table_name")
    if not isinstance(table_name, str) or not table_name.strip():
        raise _fail(path, line, "table.table_name", "must be a non-empty string")
    info = table.get("table_info")
    if not isinstance(info, dict):
        raise _fail(path, line, "table.table_info", "must be an object with 'columns' and 'rows'")
    columns = info.get("columns")
    if not isinstance(columns, list) or not columns:
        raise _fail(path, line, "table.table_info.columns", "must be a non-empty list of {'name', 'type'}")
    names: list[str] = []
    repairs: list[str] = []
    for i, col in enumerate(columns):
        if not isinstance(col, dict) or not isinstance(col.get("name"), str):
            raise _fail(path, line, f"table.table_info.columns[{i}].name", "must be a string")
        name = col["name"] or f"column_{i + 1}"
        suffix = 2
        while name.lower() in (n.lower() for n in names):
            name = f"{col['name']}_{suffix}"
            suffix += 1
        if name != col["name"]:
            repairs.append(f"column {i + 1} {col['name']!r} renamed {name!r}")
        names.append(name)
    rows = info.get("rows")
    if not isinstance(rows, list):
        raise _fail(path, line, "table.table_info.rows", "must be a list of rows (lists of cells)")
    cells: list[list[str | None]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, list):
            raise _fail(path, line, f"table.table_info.rows[{i}]", "must be a list of cells")
        if len(row) > len(names):
            raise _fail(
                path, line, f"table.table_info.rows[{i}]", f"has {len(row)} cells for {len(names)} columns"
            )
        if any(isinstance(v, dict | list) for v in row):
            raise _fail(path, line, f"table.table_info.rows[{i}]", "cells must be strings, numbers or null")
        if len(row) < len(names):
            repairs.append(f"row {i + 1} padded with NULL")
        cells.append([_cell(v) for v in row] + [None] * (len(names) - len(row)))
    return {"name": table_name, "columns": names, "rows": cells, "repairs": repairs}


def _entry_task(path: Path, line: int, entry: Any) -> Task:
    if not isinstance(entry, dict):
        raise DataError(f"{path.name} line {line}: expected a JSON object", hint=_FORMAT_HINT)
    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _fail(path, line, "description", "must be a non-empty string")
    types = entry.get("type")
    if not isinstance(types, list) or not types or types[0] not in KNOWN_TYPES:
        raise _fail(path, line, "type", f"must be a list whose first item is one of {', '.join(KNOWN_TYPES)}")
    task_type = types[0]
    table = _table(path, line, entry)
    add = entry.get("add_description")
    if add is not None and not isinstance(add, str):
        raise _fail(path, line, "add_description", "must be a string")
    state = {
        "table": table,
        "description": description,
        "add_description": add if add is not None else table_line(table["name"], table["columns"]),
        "source": str(entry.get("source", "")),
    }
    label = entry.get("label")
    sql_field = entry.get("sql")
    reference = sql_field.get("query") if isinstance(sql_field, dict) else None
    if task_type in MUTATIONS:
        if not isinstance(reference, str) or not reference.strip():
            first = label[0] if isinstance(label, list) and label else None
            reference = first if isinstance(first, str) else None
        try:
            answer_md5 = parse_answer_md5(entry.get("answer_md5"))
        except ValueError as exc:
            raise _fail(path, line, "answer_md5", str(exc)) from exc
        if answer_md5 is None:
            if not reference:
                raise _fail(
                    path,
                    line,
                    "answer_md5",
                    "is missing and no reference SQL ('sql.query' or 'label') is given",
                )
            computed = compute_gold(state, task_type, reference)
            if computed is None:
                raise _fail(
                    path, line, "label", "reference SQL fails or changes nothing; cannot derive answer_md5"
                )
            answer_md5 = computed["answer_md5"]
        gold = {"label": None, "sql": reference, "answer_md5": answer_md5, "reference_select": False}
    else:
        if not isinstance(label, list) or any(isinstance(v, dict | list) for v in label):
            raise _fail(path, line, "label", "must be a list of answer values")
        gold = {
            "label": [str(v) for v in label],
            "sql": reference,
            "answer_md5": None,
            "reference_select": False,
        }
    task_id = f"dbbench/{path.stem}/{line - 1}"
    return Task(
        task_id=task_id,
        split=DATA_SPLIT,
        instruction=description,
        task_type=task_type,
        state=state,
        gold=gold,
    )


def load_dbbench(path: str | Path) -> list[Task]:
    """Read and validate a DBBench jsonl (or json list) file; task ids are ``dbbench/<stem>/<line index>``."""
    file = Path(path)
    if not file.is_file():
        problem = (
            "is a directory, not a DBBench task file" if file.is_dir() else "DBBench task file not found"
        )
        raise DataError(
            f"{problem}: {file}",
            hint="pass an AgentBench DBBench .jsonl file (the CLI's --data FILE; make_env's data_path=FILE)",
        )
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(
            f"cannot read DBBench task file {file}: {exc}", hint="the file must be UTF-8 JSON lines"
        ) from exc
    tasks: list[Task] = []
    if file.suffix == ".json":
        try:
            entries = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{file.name}: invalid JSON: {exc}", hint=_FORMAT_HINT) from exc
        if not isinstance(entries, list):
            raise DataError(f"{file.name}: a .json task file must hold a list of entries", hint=_FORMAT_HINT)
        return [_entry_task(file, i + 1, e) for i, e in enumerate(entries)]
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{file.name} line {number}: invalid JSON: {exc.msg} (column {exc.colno})", hint=_FORMAT_HINT
            ) from exc
        tasks.append(_entry_task(file, number, entry))
    if not tasks:
        raise DataError(f"{file.name}: no tasks found", hint="the file is empty")
    return tasks

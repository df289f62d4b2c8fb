"""DBBench grading: the table hash for INSERT/UPDATE tasks and the two answer graders for select types.

* Table hash (AgentBench): ``md5(group_concat(rowhash ORDER BY rowhash))`` where ``rowhash`` is the first five
  hex digits of ``md5(concat_ws(',', <columns>))`` (NULLs skipped); an empty table hashes to NULL.
* v0.2 (AgentBench v0.2 ``metrics``): the text after ``Final Answer:`` is read as a Python literal (AgentBench
  used ``eval``; we use :func:`ast.literal_eval`) and turned into a list; one value against one label → float
  equality when both parse as floats, else string equality; otherwise set equality.
* FC (AgentBench main ``DBResultProcessor``): values are stripped of quotes, ``%`` and thousands commas, and
  ``None``/``null``/``nan``/``""`` become ``"0"``; floats match within 1e-2; lists of floats are compared as
  multisets with tolerance, other lists as sets.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

MAX_ANSWER_CHARS = 20_000
_HEX32 = re.compile(r"\b[0-9a-fA-F]{32}\b")
_SPECIAL = {
    "none": "0",
    "null": "0",
    "undefined": "0",
    "nan": "0",
    "inf": "0",
    "infinity": "0",
    "-inf": "0",
    "-infinity": "0",
    "": "0",
}


# ---------------------------------------------------------------------------------------------- table hash
def _cell_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def row_hash(row: Iterable[Any]) -> str:
    """First five hex digits of ``md5(concat_ws(',', row))`` (NULLs skipped)."""
    joined = ",".join(_cell_text(v) for v in row if v is not None)
    return hashlib.md5(joined.encode("utf-8")).hexdigest()[:5]


def table_hash(rows: Iterable[Iterable[Any]]) -> str | None:
    """DBBench's hash of a table's rows (None for an empty table, as MySQL's ``md5(NULL)``)."""
    hashes = sorted(row_hash(r) for r in rows)
    if not hashes:
        return None
    return hashlib.md5(",".join(hashes).encode("utf-8")).hexdigest()


def parse_answer_md5(value: Any) -> str | None:
    """Read a stored ``answer_md5`` (``"[('<hex>',)]"`` or bare hex); ``""``/None mean "not stored"."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected a string like \"[('<32 hex digits>',)]\", got {type(value).__name__}")
    m = _HEX32.search(value)
    if m is None:
        raise ValueError(f"expected a string like \"[('<32 hex digits>',)]\", got {value[:60]!r}")
    return m.group().lower()


# ---------------------------------------------------------------------------------------------- answers
def literal(text: str) -> Any:
    """Read ``text`` as a Python literal, as AgentBench's ``eval`` would (raises ValueError otherwise)."""
    if len(text) > MAX_ANSWER_CHARS:
        raise ValueError("answer too long")
    try:
        return ast.literal_eval(text.strip(" \t"))
    except (SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(str(exc)) from exc


def answer_value(raw: str) -> Any:
    """The committed answer as FC receives it: a list when ``raw`` is a list literal, else the raw text."""
    try:
        value = literal(raw)
    except ValueError:
        return raw.strip()
    return value if isinstance(value, list) else raw.strip()


def grade_v02(raw: str, label: Sequence[Any]) -> bool:
    """AgentBench v0.2: compare the text after ``Final Answer:`` with the label list."""
    try:
        ans: list[Any] = list(literal(raw))
    except Exception:
        ans = [raw]
    cor = list(label)
    if len(ans) == 1 and len(cor) == 1:
        try:
            return float(ans[0]) == float(cor[0])
        except (ValueError, TypeError, OverflowError):
            return bool(ans[0] == cor[0])
    try:
        return set(ans) == set(cor)
    except TypeError:
        return False


def _fc_normalise(value: Any) -> str:
    if value is None:
        return "0"
    text = str(value).strip()
    if text.endswith("%"):
        return text[:-1].strip()
    if "," in text and not text.startswith("[") and not text.endswith("]"):
        text = text.replace(",", "")
    return _SPECIAL.get(text.lower(), text)


def _fc_item(item: Any) -> str:
    if isinstance(item, tuple) and len(item) == 1:
        item = item[0]
    return _fc_normalise(str(item).strip().strip("'\""))


def _fc_split(inner: str) -> list[str]:
    """AgentBench's fallback for a bracketed answer that is not a literal: split on commas outside quotes."""
    items: list[str] = []
    current = ""
    in_quotes = False
    for ch in inner:
        if ch in "\"'":
            in_quotes = not in_quotes
        elif ch == "," and not in_quotes:
            if current:
                items.append(_fc_normalise(current.strip().strip("'\"")))
                current = ""
        else:
            current += ch
    if current:
        items.append(_fc_normalise(current.strip().strip("'\"")))
    return items


def fc_clean(answer: Any) -> list[str]:
    """AgentBench FC's ``_clean_answer``: a list of normalised strings."""
    if answer is None:
        return ["0"]
    if isinstance(answer, str):
        text = answer.strip()
        if text.startswith("[") and text.endswith("]"):
            try:
                parsed = literal(text)
            except ValueError:
                return _fc_split(text[1:-1])
            if isinstance(parsed, list):
                if all(isinstance(x, tuple) for x in parsed):
                    return [_fc_item(x) for x in parsed if len(x) == 1]
                return [_fc_item(x) for x in parsed]
        return [_fc_normalise(text.strip("'\""))]
    if isinstance(answer, list | tuple):
        return [_fc_item(x) for x in answer]
    return [_fc_normalise(str(answer).strip().strip("'\""))]


def _is_float(value: str) -> bool:
    try:
        float(value)
    except (ValueError, TypeError, OverflowError):
        return False
    return True


def _float_equal(a: str, b: str, tol: float = 1e-2) -> bool:
    try:
        return abs(float(a) - float(b)) <= tol
    except (ValueError, TypeError, OverflowError):
        return False


def grade_fc(answer: Any, label: Sequence[Any]) -> bool:
    """AgentBench FC: normalised comparison of the committed answers with the label list."""
    ans = fc_clean(answer)
    gold = fc_clean(list(label))
    if len(ans) == 1 and len(gold) == 1:
        if ans[0] == "0" and gold[0] == "0":
            return True
        if _is_float(ans[0]) and _is_float(gold[0]):
            return _float_equal(ans[0], gold[0])
        return ans[0] == gold[0]
    if all(_is_float(x) for x in ans) and all(_is_float(x) for x in gold):
        if len(ans) != len(gold):
            return False
        used = [False] * len(gold)
        for a in ans:
            for i, g in enumerate(gold):
                if not used[i] and _float_equal(a, g):
                    used[i] = True
                    break
            else:
                return False
        return all(used)
    return set(ans) == set(gold)

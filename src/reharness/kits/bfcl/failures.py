"""Failure detectors for BFCL multi-turn episodes (plain functions ``record -> list[Finding]``).

- :func:`bad_calls`: calls that do not parse (``format_error``), that name no available function, miss a
  required argument or give an argument of the wrong type against the function's JSON schema
  (``tool_error``; the detail names the function and the argument);
- :func:`forgotten_cd`: a file-system call failed with ``No such file or directory`` while the agent had
  never changed directory in the episode — it forgot the ``cd`` the request needed → ``tool_error``.
"""

from __future__ import annotations

from typing import Any

from reharness.failures.codes import FailureCode
from reharness.failures.detectors import Finding
from reharness.kits.bfcl import data
from reharness.store.records import EpisodeRecord

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "float": (int, float),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "tuple": (list, tuple),
    "dict": (dict,),
    "object": (dict,),
}


def all_function_docs() -> dict[str, dict[str, Any]]:
    """Every multi-turn function's BFCL doc by name (names are unique across the backends)."""
    return {doc["name"]: doc for cls in data.DOC_FILES for doc in data.function_docs(cls)}


def argument_problems(call: data.Call, doc: dict[str, Any]) -> list[str]:
    """What is wrong with ``call``'s arguments against ``doc``'s schema (empty: nothing)."""
    params = doc.get("parameters", {})
    names = list(params.get("properties", {}))
    given = dict(zip(names, call.args, strict=False)) | call.kwargs
    problems = [
        f"{call.name}: missing required argument {r!r}" for r in params.get("required", []) if r not in given
    ]
    for key, value in given.items():
        spec = params.get("properties", {}).get(key)
        if spec is None:
            problems.append(f"{call.name}: unknown argument {key!r}")
            continue
        allowed = _PY_TYPES.get(str(spec.get("type")))
        wrong_bool = isinstance(value, bool) and spec.get("type") in ("integer", "float", "number")
        if allowed and (not isinstance(value, allowed) or wrong_bool):
            problems.append(
                f"{call.name}: argument {key!r} should be {spec.get('type')}, got {type(value).__name__}"
            )
    return problems


def bad_calls(record: EpisodeRecord) -> list[Finding]:
    if record.success:
        return []
    docs = all_function_docs()
    unparsed: list[int] = []
    wrong: dict[int, str] = {}
    for step in record.steps:
        action = (step.action or "").strip()
        if not action or action in (data.END_TURN, f"{data.END_TURN}()"):
            continue
        try:
            calls = data.parse_calls(action)
        except data.CallSyntaxError:
            unparsed.append(step.index)
            continue
        for call in calls:
            if call.name not in docs or step.observation.startswith("Error: no function named"):
                wrong.setdefault(step.index, f"{call.name}: no such function")
                continue
            problems = argument_problems(call, docs[call.name])
            if problems:
                wrong.setdefault(step.index, problems[0])
    findings = []
    if unparsed:
        detail = "a call did not parse as name(arg=value) with literal values"
        findings.append(Finding(FailureCode.FORMAT_ERROR, tuple(unparsed), detail))
    if wrong:
        first = next(iter(wrong.values()))
        findings.append(
            Finding(FailureCode.TOOL_ERROR, tuple(wrong), f"{len(wrong)} bad call(s), e.g. {first}")
        )
    return findings


def forgotten_cd(record: EpisodeRecord) -> list[Finding]:
    if record.success:
        return []
    moved = False
    for step in record.steps:
        action = (step.action or "").strip()
        if action.startswith("cd(") or "[cd(" in action or ", cd(" in action:
            moved = True
        if not moved and "No such file or directory" in step.observation:
            detail = (
                "a file call failed with 'No such file or directory' before any cd: the agent forgot to cd"
            )
            return [Finding(FailureCode.TOOL_ERROR, (step.index,), detail)]
    return []


def bfcl_findings(record: EpisodeRecord) -> list[Finding]:
    """Every BFCL detector."""
    return [*bad_calls(record), *forgotten_cd(record)]

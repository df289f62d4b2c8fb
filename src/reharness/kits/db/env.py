"""``reharness/DB-v0``: AgentBench DBBench on SQLite, with generated tasks or the real AgentBench files.

One table per task and a question (other, counting, comparison, ranking, aggregation-SUM/MIN/MAX/AVG) or a
mutation (INSERT, UPDATE). The agent writes v0.2 text (``Action: Operation`` + a ```` ```sql ```` block, or
``Final Answer: [...]``) or calls the tools ``execute_sql`` / ``commit_final_answer``; SQL runs in a fresh
sandboxed in-memory SQLite database that behaves like MySQL where results depend on it (:mod:`.dialect`,
:mod:`.functions`, :mod:`.sandbox`). ``protocol`` picks the grader and the default round limit: ``"v0.2"``
(20 rounds, exact grading; a mutation is graded by table hash even when the rounds run out, as in AgentBench
v0.2) or ``"fc"`` (15 rounds, normalised grading). ``data_path`` loads an AgentBench jsonl file instead of
generating tasks; its single split is ``"data"``. The env honours only "block" and "hint" hook effects, as
Harness-R1's DBBench runtime does.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from reharness.core.errors import EnvError, did_you_mean
from reharness.envs.base import SPLITS, Task, TextEnv, Transition
from reharness.kits.db import protocol
from reharness.kits.db.expert import expert_action, random_action
from reharness.kits.db.generator import make_task
from reharness.kits.db.gold import MUTATIONS, build_sandbox
from reharness.kits.db.grading import answer_value, grade_fc, grade_v02
from reharness.kits.db.loader import DATA_SPLIT, load_dbbench
from reharness.kits.db.sandbox import SqlSandbox
from reharness.kits.db.tracker import EpisodeTracker


class DBEnv(TextEnv):
    """DBBench environment (see module docstring)."""

    name: ClassVar[str] = "db"
    env_id: ClassVar[str] = "reharness/DB-v0"
    version: ClassVar[int] = 0
    default_max_steps: ClassVar[int] = protocol.MAX_STEPS["v0.2"]
    honoured_effects: ClassVar[frozenset[str] | None] = frozenset({"block", "hint"})

    def available_splits(self) -> tuple[str, ...]:
        return (DATA_SPLIT,) if getattr(self, "_dataset", None) is not None else SPLITS

    def __init__(
        self,
        split: str = "train",
        max_steps: int | None = None,
        render_mode: str | None = None,
        protocol: str = "v0.2",
        data_path: str | Path | None = None,
    ) -> None:
        if protocol not in _PROTOCOLS:
            raise EnvError(
                f"db: unknown protocol {protocol!r}", hint=did_you_mean(str(protocol), list(_PROTOCOLS))
            )
        self.protocol = protocol
        self.data_path = Path(data_path) if data_path is not None else None
        self._dataset: list[Task] | None = (
            load_dbbench(self.data_path) if self.data_path is not None else None
        )
        self._by_id = {t.task_id: t for t in self._dataset or []}
        if self._dataset is not None and split == "train":
            split = DATA_SPLIT
        steps = max_steps if max_steps is not None else _MAX_STEPS[protocol]
        super().__init__(split=split, max_steps=steps, render_mode=render_mode)
        self.sandbox: SqlSandbox | None = None
        self.tracker = EpisodeTracker([])

    # ------------------------------------------------------------------ tasks
    def generate_task(self, split: str, index: int) -> Task:
        if self._dataset is not None:
            if split != DATA_SPLIT:
                raise EnvError(f"db: a loaded task file has only the split {DATA_SPLIT!r}, not {split!r}")
            return self.get_task(index)
        return self.draw_task(split, index, partial(make_task, split=split))

    def get_task(self, index: int) -> Task:
        if self._dataset is None:
            return super().get_task(index)
        if not 0 <= index < len(self._dataset):
            raise EnvError(
                f"db: task index {index} out of range 0..{len(self._dataset) - 1} for {self.data_path}"
            )
        return self._dataset[index]

    def num_tasks(self) -> int:
        return len(self._dataset) if self._dataset is not None else super().num_tasks()

    def task_by_id(self, task_id: str) -> Task:
        if self._dataset is None:
            return super().task_by_id(task_id)
        if task_id not in self._by_id:
            example = next(iter(self._by_id))
            raise EnvError(
                f"db: no task {task_id!r} in {self.data_path}", hint=f"task ids look like {example!r}"
            )
        return self._by_id[task_id]

    @property
    def tasks(self) -> list[Task]:
        """The loaded tasks (empty for generated tasks)."""
        return list(self._dataset or [])

    # ------------------------------------------------------------------ episode
    def _load(self, task: Task) -> None:
        try:
            table = task.state["table"]
            columns = list(table["columns"])
            sandbox = build_sandbox(task.state)
        except (KeyError, TypeError, ValueError) as exc:
            raise EnvError(
                f"db: malformed task {task.task_id!r}: {exc}",
                hint="a db task state holds 'table' {'name', 'columns', 'rows'}, 'description' and "
                "'add_description'",
            ) from exc
        except Exception as exc:  # sqlite3 errors while building the table
            raise EnvError(f"db: cannot build the table of task {task.task_id!r}: {exc}") from exc
        if self.sandbox is not None:
            self.sandbox.close()
        self.sandbox = sandbox
        self.tracker = EpisodeTracker(columns)

    def _initial_observation(self) -> str:
        assert self.task is not None
        return protocol.task_prompt(
            self.protocol, self.task.state["description"], self.task.state["add_description"]
        )

    def _transition(self, action: str) -> Transition:
        assert self.task is not None and self.sandbox is not None
        parsed = protocol.parse_action(action)
        if parsed.kind == "answer":
            self.tracker.record_answer(parsed.answer_raw)
            correct = self._grade(parsed.answer_raw)
            verdict = "correct" if correct else "incorrect"
            reward = 1.0 if correct else 0.0
            return Transition(
                observation=f"Final answer submitted ({verdict}).",
                reward=reward,
                done=True,
                success=correct,
                score=reward,
                info={"answer": parsed.answer_raw.strip(), "correct": correct},
            )
        if parsed.kind == "invalid":
            self.tracker.record_invalid()
            message = protocol.FC_FORMAT_ERROR if self.protocol == "fc" else parsed.error
            transition = Transition(observation=message, invalid=True, info={"error_kind": "format_error"})
        else:
            result = self.sandbox.execute(parsed.sql)
            self.tracker.record_sql(parsed.sql, result)
            text = result.text or ("No response from database." if self.protocol == "fc" else "")
            transition = Transition(
                observation=protocol.truncate(text), info={"error_kind": result.error_kind}
            )
        if self.protocol == "v0.2" and self.task.task_type in MUTATIONS and self.steps >= self.max_steps:
            # AgentBench v0.2 hashes the table after the loop, whether or not an answer was given.
            correct = self._mutation_correct()
            transition.success, transition.reward, transition.score = correct, float(correct), float(correct)
            transition.info["correct"] = correct
        return transition

    def _mutation_correct(self) -> bool:
        assert self.task is not None and self.sandbox is not None
        table = self.task.state["table"]
        current = self.sandbox.table_hash(table["name"], table["columns"])
        return current is not None and current == self.task.gold.get("answer_md5")

    def _grade(self, raw: str) -> bool:
        assert self.task is not None
        if self.task.task_type in MUTATIONS:
            return self._mutation_correct()
        label = list(self.task.gold.get("label") or [])
        if self.protocol == "fc":
            return grade_fc(answer_value(raw), label)
        return grade_v02(raw, label)

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        super().close()

    # ------------------------------------------------------------------ policies
    def expert_action(self) -> str:
        assert self.task is not None and self.sandbox is not None, "call reset() first"
        return expert_action(self.task, self.sandbox, self.tracker)

    def gold_action(self) -> str:
        """Replay the file's gold: mutations run the reference statement; questions answer the label."""
        assert self.task is not None and self.sandbox is not None, "call reset() first"
        return expert_action(self.task, self.sandbox, self.tracker, run_reference=False)

    def random_action(self, rng: random.Random) -> str:
        assert self.task is not None, "call reset() first"
        return random_action(self.task, rng)

    # ------------------------------------------------------------------ tools and hooks
    def tools(self) -> list[dict[str, Any]]:
        return [dict(t) for t in protocol.TOOLS]

    def action_from_tool_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return protocol.action_from_tool_call(name, arguments)

    def tool_call_from_action(self, action: str) -> tuple[str, dict[str, Any]]:
        return protocol.tool_call_from_action(action)

    def runtime_state(self) -> dict[str, Any]:
        snapshot = self.tracker.snapshot(self.steps)
        snapshot["protocol"] = self.protocol
        return snapshot

    def task_fields(self) -> dict[str, Any]:
        assert self.task is not None
        task_type = self.task.task_type
        if task_type in MUTATIONS:
            shape = "mutation"
        else:
            shape = "single" if len(self.task.gold.get("label") or []) == 1 else "multiple"
        return {
            "task_type": task_type,
            "instruction": self.task.instruction,
            "answer_shape": shape,
            "target_table": self.task.state["table"]["name"],
            "description": self.task.state["description"],
        }


_PROTOCOLS = protocol.PROTOCOLS
_MAX_STEPS = protocol.MAX_STEPS

"""The prompted-editor row of ``experiment r1`` (``--editor``): a model prompted to edit the harness, asked
once per test packet through the real OpenAI-compatible path (a local server with a scripted reply), its
patch measured like every other method's, and its parse / validation failures counted by code."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from targets import ClumsySolver

from reharness.core.errors import ConfigError, ReharnessError
from reharness.core.types import ChatRequest
from reharness.engineer import OperatorEngineer
from reharness.engineer.compact import TASK_LINE
from reharness.experiments.r1 import Evaluator, R1Config, R1Result, aggregate
from reharness.experiments.r1_report import reply_funnel
from reharness.models.server import ChatServer, ServerThread
from reharness.runtime import FunctionAgent
from reharness.runtime.agents import SCRIPTED_AGENTS


class Editor:
    """The served editor: one reply for every request; it keeps the requests it was sent."""

    def __init__(self) -> None:
        self.reply = ""
        self.requests: list[ChatRequest] = []

    def __call__(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return self.reply


@pytest.fixture
def editor(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Editor]]:
    monkeypatch.setitem(SCRIPTED_AGENTS, "clumsy", lambda: ClumsySolver())
    script = Editor()
    thread = ServerThread(ChatServer(FunctionAgent(script), model_name="editor"))
    thread.start()
    yield f"openai:editor@{thread.server.base_url}", script
    thread.stop()


def config_for(out: Path, editor: str, **options: object) -> R1Config:
    return R1Config(
        envs=["household"], agent="clumsy", out=str(out), test_batches=1, batch_size=6, max_steps=12,
        editor=editor, controls=False, **options,
    )  # fmt: skip


def evaluate(config: R1Config, methods: tuple[str, ...]) -> list[dict[str, object]]:
    return asyncio.run(Evaluator(config, None, lambda text: None, methods=methods).run())


def test_the_prompted_editor_row_measures_the_models_patch(
    tmp_path: Path, editor: tuple[str, Editor]
) -> None:
    spec, script = editor
    config = config_for(tmp_path, spec)
    assert config.editor == spec and "prompted" in aggregate(config, [])[1]  # a row of the main table

    async def teacher_reply() -> str:  # the editor answers with the teacher's patch, in Harness-R1's format
        evaluator = Evaluator(config, None, lambda text: None)
        _, packet = await evaluator.baseline("household", "test", 0)
        await evaluator.close()
        return (await OperatorEngineer().propose(packet, 1))[0].raw_reply

    script.reply = asyncio.run(teacher_reply())
    records = {r["method"]: r for r in evaluate(config, ("none", "prompted"))}
    prompted = records["prompted"]
    assert len(script.requests) == 1  # one sample per packet, never resampled
    request = script.requests[0]
    assert request.sampling.temperature == config.temperature and request.sampling.max_tokens == 1024
    assert request.messages[1].content.endswith("<think>...</think><patch>{...}</patch>.")  # Harness-R1's
    assert len(request.messages[1].content) > 3 * config.max_prompt_chars  # full prompt, asking for hook code
    assert prompted["valid"] and prompted["editor"] == spec and prompted["error_code"] is None
    assert prompted["raw_reply"] is None  # kept only for refused replies
    assert sum(prompted["successes"]) > sum(records["none"]["successes"]) and prompted["rescued"]
    rows, _ = aggregate(config, list(records.values()), methods=("none", "prompted"))
    row = next(r for r in rows if r.method == "prompted")
    assert row.valid_patches == 1 and row.valid_net == len(prompted["rescued"]) - len(prompted["broken"])
    assert row.parse_failures == row.validation_failures == 0

    # another editor on the same output would mix rows of two models under one name
    with pytest.raises(ConfigError, match="prompted-editor rows of"):
        evaluate(config_for(tmp_path, spec + "x"), ("none", "prompted"))


def test_an_editor_reply_that_does_not_parse_is_counted_by_code(
    tmp_path: Path, editor: tuple[str, Editor]
) -> None:
    spec, script = editor
    script.reply = "The agent should try harder and read the room description carefully."
    config = config_for(tmp_path, spec, editor_language="program", editor_max_tokens=64)
    records = {r["method"]: r for r in evaluate(config, ("none", "prompted"))}
    prompted = records["prompted"]
    assert "<program>" in script.requests[0].messages[0].content  # the compact program prompt
    assert len(script.requests) == 1  # a reply that fails the checks is scored, not resampled
    assert prompted["status"] == "invalid" and not prompted["valid"]
    assert prompted["rejected_at"] == "parse" and prompted["error_code"] == "no_patch_tag"
    assert prompted["raw_reply"] == script.reply  # what the refused reply said, kept for reading
    assert prompted["successes"] == records["none"]["successes"]  # scored as no patch
    rows, _ = aggregate(config, list(records.values()), methods=("none", "prompted"))
    row = next(r for r in rows if r.method == "prompted")
    assert (row.parse_failures, row.validation_failures, row.error_codes) == (1, 0, {"no_patch_tag": 1})
    report = reply_funnel(R1Result(config=config, rows=rows, average={}))
    line = next(x for x in report if x.startswith("| prompted |"))
    assert "| 1 | 0 | 0 | 0 | – | no_patch_tag 1 |" in line


def test_hook_code_from_the_compact_prompt_and_rows_of_another_prompt_are_refused(
    tmp_path: Path, editor: tuple[str, Editor]
) -> None:
    spec, script = editor
    script.reply = "no patch here"
    compact = config_for(tmp_path, spec, editor_prompt="compact", editor_max_tokens=64)
    (record,) = [r for r in evaluate(compact, ("prompted",)) if r["method"] == "prompted"]
    system, user = script.requests[0].messages
    # hook code (a patch, not a program) asked within the compact budget, not with the full prompt
    assert user.content.endswith(TASK_LINE) and len(user.content) <= compact.max_prompt_chars
    assert record["editor_options"] == {"prompt": "compact", "language": "hooks", "constrain": False,
                                        "max_tokens": 64}  # fmt: skip
    # the same editor asked with the full prompt would mix two ways of asking under one row
    with pytest.raises(ConfigError, match="prompted-editor rows asked with .*compact"):
        evaluate(config_for(tmp_path, spec, editor_max_tokens=64), ("prompted",))
    assert len(script.requests) == 1


def test_editor_options_are_checked_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ReharnessError, match="--editor 'nosuch:model': unknown model backend 'nosuch'"):
        R1Config(envs=["household"], editor="nosuch:model")
    with pytest.raises(ConfigError, match="--editor-constrain needs --editor-language program"):
        R1Config(envs=["household"], editor="tiny:household-S", editor_constrain=True)
    with pytest.raises(ConfigError, match="--editor-prompt full asks for hook code"):
        R1Config(
            envs=["household"], editor="tiny:household-S", editor_language="program", editor_prompt="full"
        )

"""llama.cpp backend for GGUF models (``pretrained:NAME@llamacpp``), in-process through ``llama-cpp-python``.

GGUF is llama.cpp's native format: the quantised weights are used as they are (no dequantisation to fp32,
no conversion step). Measured side by side on a 2-core CPU (``benchmarks/bench_pretrained_inference.py``)
it decodes SmolLM2-135M's Q4_1 a little faster than fp32 PyTorch but reads prompts several times slower,
so it is not the default engine (agent requests are long prompts and short replies); on a machine whose
llama.cpp reads prompts fast, or for long replies, it may win. ``pip install llama-cpp-python`` builds it
from source (a C++ compiler and cmake; 22 minutes on 2 busy cores here).

**Slots.** A ``Llama`` context decodes one sequence at a time and keeps the key/value cache of the last one,
reusing the longest prefix a new prompt shares with it. Concurrent episodes would evict each other's prefix,
so the backend holds ``slots`` contexts over the same memory-mapped weights; a request takes the idle slot
whose cached tokens share the longest prefix with its prompt (an episode's next prompt extends its previous
prompt and reply), and ``workers`` slots decode at once in threads (llama.cpp releases the GIL).

**Replies.** The chat template is the one the GGUF file carries (``tokenizer.chat_template``), rendered with
Jinja2 as transformers renders it. Decoding is seeded per request (``request.seed``; greedy at temperature
0), with top-p only (no top-k, min-p or repetition penalty, as the hf backend), and ends at an end-of-turn
token, the reply budget, a loop (:func:`reharness.models.hf_decode.in_loop`) or, with ``end_at_action``
(default on), once the reply holds a whole action (the request's ``complete``). Responses carry prompt and
completion token ids; no log-probabilities (llama.cpp would have to keep every position's logits).

**Determinism.** Same request, same slot history ⇒ same reply. A prompt read partly from a cached prefix
and partly fresh sums in another order than one read whole, so replies may differ in the last bits of a
near-tie across concurrency settings, as with the hf backend.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reharness.core.agent import Agent
from reharness.core.errors import ConfigError
from reharness.core.types import ChatRequest, ChatResponse
from reharness.models.base import context_overflow, parse_text_tool_calls, template_messages
from reharness.models.hf_decode import in_loop

END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>")
_SPACE = "\u200b"  # a forged control token in env text is broken up, so it tokenises as plain text


@dataclass
class _Slot:
    llm: Any
    busy: bool = False
    ids: list[int] = field(default_factory=list)  # what its KV cache holds
    used: int = 0  # last use (a counter): ties go to the least recently used slot


def _shared(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class LlamaCppBackend(Agent):
    """A GGUF chat model decoded by llama.cpp (see the module docstring)."""

    def __init__(
        self,
        path: str | Path,
        *,
        policy_id: str | None = None,
        slots: int = 8,
        workers: int = 2,
        n_threads: int | None = None,
        n_ctx: int = 8192,
        n_batch: int = 512,
        loop_span: int = 64,
        end_at_action: bool = True,
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ConfigError(
                "the llama.cpp engine needs the package 'llama-cpp-python'",
                hint="pip install llama-cpp-python (builds from source: needs a C++ compiler and cmake), "
                "or use the transformers engine: pretrained:NAME@hf",
            ) from None
        import os

        self.path = Path(path)
        self.policy_id = policy_id or f"llamacpp:{self.path.name}"
        self.workers = max(1, workers)
        threads = n_threads or max(1, (os.cpu_count() or 1) // self.workers)
        options: dict[str, Any] = {"n_ctx": n_ctx, "n_batch": n_batch, "n_threads": threads, "verbose": False}
        self._slots = [_Slot(Llama(model_path=str(self.path), **options)) for _ in range(max(1, slots))]
        first = self._slots[0].llm
        self.context_length = int(first.n_ctx())
        template = first.metadata.get("tokenizer.chat_template")
        if not template:
            raise ConfigError(f"{str(self.path)!r} carries no chat template (tokenizer.chat_template)")
        self._template = _compile(template)
        self._bos, self._eos = _token_text(first, first.token_bos()), _token_text(first, first.token_eos())
        self.stop_ids = {first.token_eos()} | {
            ids[0]
            for t in END_OF_TURN
            if len(ids := first.tokenize(t.encode(), add_bos=False, special=True)) == 1
        }
        self._specials = [t for t in END_OF_TURN + ("<|im_start|>",) if t in template]
        self.loop_span, self.end_at_action = loop_span, end_at_action
        self._lock = threading.Condition()
        self._uses = 0
        self._pool: ThreadPoolExecutor | None = None

    # ------------------------------------------------------------------ prompts
    def render(self, request: ChatRequest) -> str:
        messages = template_messages(request.messages)
        for message in messages:
            for token in self._specials:
                message["content"] = str(message["content"]).replace(token, token[:1] + _SPACE + token[1:])
        return str(
            self._template.render(
                messages=messages,
                tools=list(request.tools) or None,
                add_generation_prompt=True,
                bos_token=self._bos,
                eos_token=self._eos,
            )
        )

    def encode(self, request: ChatRequest) -> list[int]:
        text = self.render(request)
        llm = self._slots[0].llm
        return [int(i) for i in llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)]

    # ------------------------------------------------------------------ serving
    async def complete(self, request: ChatRequest) -> ChatResponse:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="reharness-llamacpp")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self.generate, request)

    def generate(self, request: ChatRequest) -> ChatResponse:
        """Answer one request (blocking; thread-safe: it waits for an idle slot)."""
        try:
            prompt = self.encode(request)
        except Exception as exc:
            return ChatResponse(error=f"chat template failed: {type(exc).__name__}: {exc}"[:1000])
        room = self.context_length - len(prompt)
        if room <= 0:
            error = context_overflow(len(prompt), self.context_length)
            return ChatResponse(prompt_token_ids=tuple(prompt), error=error)
        slot = self._take(prompt)
        try:
            ids = self._decode(slot, prompt, min(request.sampling.max_tokens, room), request)
        except Exception as exc:
            slot.ids = []
            return ChatResponse(
                prompt_token_ids=tuple(prompt), error=f"llama.cpp: {type(exc).__name__}: {exc}"
            )
        finally:
            self._give(slot)
        body = ids[:-1] if ids and ids[-1] in self.stop_ids else ids
        text = slot.llm.detokenize(body).decode("utf-8", errors="replace")
        return ChatResponse(
            text=text,
            tool_calls=parse_text_tool_calls(text) if request.tools else (),
            prompt_token_ids=tuple(prompt),
            completion_token_ids=tuple(ids),
        )

    def _take(self, prompt: list[int]) -> _Slot:
        with self._lock:
            while all(s.busy for s in self._slots):
                self._lock.wait()
            idle = [s for s in self._slots if not s.busy]
            slot = max(idle, key=lambda s: (_shared(s.ids, prompt), -s.used))
            slot.busy = True
            self._uses += 1
            slot.used = self._uses
            return slot

    def _give(self, slot: _Slot) -> None:
        with self._lock:
            slot.busy = False
            self._lock.notify()

    def _decode(self, slot: _Slot, prompt: list[int], budget: int, request: ChatRequest) -> list[int]:
        llm, sampling = slot.llm, request.sampling
        llm.set_seed(request.seed & 0xFFFF_FFFF)
        greedy = sampling.temperature == 0
        ids: list[int] = []
        slot.ids = list(prompt)  # generate() reuses the longest prefix the context holds
        for token in llm.generate(
            prompt,
            top_k=1 if greedy else 0,
            top_p=1.0 if greedy else sampling.top_p,
            min_p=0.0,
            temp=0.0 if greedy else sampling.temperature,
            repeat_penalty=1.0,
            reset=True,
        ):
            ids.append(int(token))
            if int(token) in self.stop_ids or len(ids) >= budget or in_loop(ids, self.loop_span):
                break
            if self.end_at_action and request.complete is not None and self._action_ends(llm, ids, request):
                break
        slot.ids = list(prompt) + ids[:-1]
        return ids

    @staticmethod
    def _action_ends(llm: Any, ids: list[int], request: ChatRequest) -> bool:
        last = llm.detokenize(ids[-1:]).decode("utf-8", errors="ignore")
        if not any(mark in last for mark in ("\n", "`", ">")):
            return False
        assert request.complete is not None
        return bool(request.complete(llm.detokenize(ids).decode("utf-8", errors="ignore")))

    async def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self._pool = None


def _token_text(llm: Any, token: int) -> str:
    return str(llm.detokenize([token], special=True).decode("utf-8", errors="ignore")) if token >= 0 else ""


def _compile(template: str) -> Any:
    """The chat template compiled as transformers compiles it (sandboxed Jinja2, trimmed blocks)."""
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template)

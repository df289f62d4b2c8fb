"""In-process Hugging Face causal LM backend (``hf:PATH``) with micro-batching and per-request seeds.

Any model directory that ``AutoModelForCausalLM`` and ``AutoTokenizer`` load and whose tokenizer has a chat
template works. Why a hand-written decoding loop instead of ``model.generate``: ``generate`` samples from the
global torch RNG, so the tokens a request gets would depend on which other requests share its batch. Here
every row samples from its own ``torch.Generator`` seeded with ``request.seed`` (greedy when temperature is
0), so a rerun with the same seeds reproduces the same outputs whatever the batch composition.

**Micro-batching.** Concurrent episodes call :meth:`HFBackend.complete`; requests that arrive within
``batch_window_s`` of each other (at most ``max_wait_s`` after the first, at most ``max_batch_size``) are
left-padded into one batch — attention mask and explicit position ids, so padding does not shift positions —
and decoded together with a KV cache in one model thread, while the event loop keeps stepping environments.
The batch keeps running as its rows change (:mod:`reharness.models.hf_decode`): a row that finishes is
answered at once, and requests that arrive meanwhile join it. Prompts reuse the key/value cache of the
longest prefix they share with a recent sequence (an episode's previous prompt and reply), bounded by
``prefix_cache_mb`` (:mod:`reharness.models.hf_cache`).

**Residual nondeterminism.** With the same seeds and the same batch composition outputs are bit-identical.
A different batch composition changes tensor shapes, and CPU/GPU kernels may then sum in another order, so
logits can differ in the last bits; this can flip a greedy near-tie or a sampled token at a CDF boundary.
``benchmarks/bench_backends.py`` and ``tests/models/test_hf_backend.py`` measure how often a whole reply
differs between batch size 1 and batched decoding (on CPU, float32: 0 of 24 replies, and 0 of 32 ALFWorld-like
episodes at concurrency 1 vs 32, greedy and at temperature 1). Use ``max_batch_size=1`` for bit-exact
replays across concurrency settings.

**Token data.** Responses carry the prompt ids, the completion ids (including the end-of-turn token when the
reply ended with one) and per-token log-probabilities of the distribution each token was drawn from
(``log_softmax(logits / temperature)``; raw logits when greedy), as TRL computes them. ``text`` is the raw
decoded reply; with ``tools`` in the request, ``<tool_call>`` blocks (see :mod:`reharness.models.base`) are
also parsed into ``tool_calls``.

**Constrained replies.** A request with a ``constraint`` (``viable(reply_so_far, final)``, e.g. a repair
program's grammar, :mod:`reharness.engineer.program_prefix`) only keeps a drawn token that leaves the reply
viable (a stop token must end a complete reply); a rejected token is masked and the row draws again from the
renormalised distribution with its own generator, so constrained decoding stays seeded and reproducible
(the rules: :mod:`reharness.models.hf_sampling`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reharness.core.agent import Agent
from reharness.core.errors import ConfigError
from reharness.core.types import ChatRequest, ChatResponse
from reharness.models.base import context_overflow, parse_text_tool_calls, template_messages
from reharness.models.hf_cache import PromptReader, supports_reuse
from reharness.models.hf_decode import Row, RunningBatch

END_OF_TURN_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>")


@dataclass
class BatchStats:
    """Counters of the micro-batcher (for benchmarks and logs)."""

    batches: int = 0
    requests: int = 0
    max_batch: int = 0
    model_seconds: float = 0.0
    prefill_seconds: float = 0.0  # of model_seconds: reading prompts (the rest is decoding and tokenising)
    joins: int = 0  # times waiting requests joined a running batch
    sizes: list[int] = field(default_factory=list)

    @property
    def mean_batch(self) -> float:
        return self.requests / max(1, self.batches)


@dataclass(eq=False)
class _Pending:
    request: ChatRequest
    future: asyncio.Future[ChatResponse] | None  # None: a blocking call collects the reply itself
    prompt: Future[list[int]]  # the request's token ids, encoded while earlier passes run


Answer = Callable[[_Pending, ChatResponse], None]


def _done(encode: Callable[[ChatRequest], list[int]], request: ChatRequest) -> Future[list[int]]:
    """``encode(request)`` as a settled future (its error kept, raised by ``result()``)."""
    future: Future[list[int]] = Future()
    try:
        future.set_result(encode(request))
    except Exception as exc:
        future.set_exception(exc)
    return future


#: A model directory's own decoding defaults (``{"end_at_action": true}`` for a converted pretrained model),
#: so a directory decodes the same way whichever spec names it: ``pretrained:``, ``hf:DIR``, or a policy
#: trained from it (``train policy`` copies the file into its ``model/``).
AGENT_DEFAULTS = "reharness_agent.json"


def agent_defaults(path: str | Path) -> dict[str, Any]:
    """The decoding defaults a model directory declares (:data:`AGENT_DEFAULTS`; empty when it has none)."""
    import json

    file = Path(path) / AGENT_DEFAULTS
    try:
        found = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{file}: not a JSON object of decoding defaults ({exc})") from None
    if not isinstance(found, dict) or not all(isinstance(v, bool) for v in found.values()):
        raise ConfigError(f'{file}: expected a JSON object like {{"end_at_action": true}}')
    return found


def write_agent_defaults(path: str | Path, defaults: dict[str, Any]) -> None:
    import json

    (Path(path) / AGENT_DEFAULTS).write_text(json.dumps(defaults, sort_keys=True) + "\n", encoding="utf-8")


def load_model_dir(path: str | Path, device: str = "cpu", dtype: str | None = None) -> tuple[Any, Any]:
    """Load ``(tokenizer, model)`` from a local model directory with clear errors (never from a hub)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = Path(path).expanduser()
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(
            f"--device {device}: this machine has no CUDA device (torch.cuda.is_available() is false)",
            hint="drop --device (the CPU is the default), or run on a machine with a GPU and a CUDA build "
            "of torch; for a vLLM server use --agent openai:MODEL@URL",
        )
    if not (root / "config.json").is_file():
        raise ConfigError(
            f"{str(root)!r} is not a Hugging Face model directory (no config.json)",
            hint="pass hf:PATH with a directory written by save_pretrained (config.json, weights, tokenizer)",
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(root), local_files_only=True)
        # CPU: float32 (half-precision weights, as shipped tiny agents are, are slow and lossy on CPU)
        torch_dtype = getattr(torch, dtype) if dtype else ("auto" if device != "cpu" else torch.float32)
        model: Any = AutoModelForCausalLM.from_pretrained(str(root), dtype=torch_dtype, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the model in {str(root)!r}: {exc}") from exc
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(
            f"the tokenizer in {str(root)!r} has no chat template",
            hint="save a tokenizer with chat_template set (tokenizer.chat_template = '...'; save_pretrained)",
        )
    model.to(device).eval()
    return tokenizer, model


_LOADED: dict[tuple[str, tuple[tuple[str, Any], ...]], HFBackend] = {}
_LOADING = threading.Lock()


def _loaded(path: str, recipe: tuple[tuple[str, Any], ...]) -> HFBackend:
    """The backend of ``recipe`` in this process, loaded on first use (what an unpickled backend is)."""
    with _LOADING:
        if (path, recipe) not in _LOADED:
            _LOADED[(path, recipe)] = HFBackend(path, **dict(recipe))
        return _LOADED[(path, recipe)]


class HFBackend(Agent):
    """A local Hugging Face chat model answering concurrent requests in micro-batches.

    ``max_batch_size``, ``batch_window_s`` and ``max_wait_s`` shape the micro-batches; ``prefix_cache_mb``
    bounds the prefix cache (0 turns reuse off); ``prefill_budget`` bounds the attention scores of one
    prompt-reading pass (rows x new tokens x context tokens, per head), trading memory for passes.
    ``loop_span``: a reply whose last ``loop_span`` tokens repeat a short span ends there
    (:func:`reharness.models.hf_decode.in_loop`; 0 never cuts). ``running_batches``: requests join a batch
    that is decoding and each reply returns as it ends (continuous batching), instead of each batch
    decoding as a unit; off by default because on a CPU it measured slower (``benchmarks/bench_decoding.py
    --arms static,running``: a step's cost grows with rows x cached tokens, so rows of other lengths padded
    into one batch cost more than the per-step overhead the sharing saves). ``end_at_action``: a reply ends
    once it holds a whole action (the request's ``complete``, :mod:`reharness.runtime.reply_end`); on for
    pretrained models, which never learnt to stop there. Unset, it is the model directory's own default
    (:func:`agent_defaults`; off when the directory declares none).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        policy_id: str | None = None,
        max_batch_size: int = 32,
        batch_window_s: float = 0.002,
        max_wait_s: float = 0.02,
        device: str = "cpu",
        dtype: str | None = None,
        num_threads: int | None = None,
        prefix_cache_mb: float = 512.0,
        prefill_budget: int = 1 << 22,
        loop_span: int = 64,
        running_batches: bool = False,
        end_at_action: bool | None = None,
        loaded: tuple[Any, Any] | None = None,
    ) -> None:
        import torch

        if end_at_action is None:
            end_at_action = bool(agent_defaults(path).get("end_at_action", False))

        #: constructor arguments: a pickled backend is its recipe, rebuilt (model loaded) where unpickled
        self._recipe: dict[str, Any] = {
            "policy_id": policy_id,
            "max_batch_size": max_batch_size,
            "batch_window_s": batch_window_s,
            "max_wait_s": max_wait_s,
            "device": device,
            "dtype": dtype,
            "num_threads": num_threads,
            "prefix_cache_mb": prefix_cache_mb,
            "prefill_budget": prefill_budget,
            "loop_span": loop_span,
            "running_batches": running_batches,
            "end_at_action": end_at_action,
        }
        if num_threads:
            torch.set_num_threads(num_threads)
        self.path = Path(path)
        self.policy_id = policy_id or f"hf:{self.path.name}"
        self.max_batch_size = max(1, max_batch_size)
        self.batch_window_s = batch_window_s
        self.max_wait_s = max_wait_s
        self.device = device
        # ``loaded``: a (tokenizer, model) already in memory, e.g. the policy a trainer is updating; the
        # backend then decodes with the live weights (call :meth:`weights_changed` after each update)
        self.tokenizer, self.model = loaded if loaded is not None else load_model_dir(path, device, dtype)
        self.context_length = int(getattr(self.model.config, "max_position_embeddings", 0) or 1 << 30)
        self.stop_ids = self._stop_ids()
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else min(self.stop_ids))
        self._structured_calls = "tool_calls" in str(self.tokenizer.chat_template)
        self._sdpa = getattr(self.model.config, "_attn_implementation", None) == "sdpa"
        self._cache_kw = (
            "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"
        )
        self.reader = PromptReader(
            self._forward,
            self.model.config,
            self.pad_id,
            device,
            reuse=supports_reuse(self.model, self._cache_kw),
            prefix_cache_bytes=int(prefix_cache_mb * 2**20),
            budget=prefill_budget,
        )
        self.stats = BatchStats()
        self._inbox: deque[_Pending] = deque()  # requests waiting for the model thread
        self._inbox_ready = threading.Condition()
        self._engine: threading.Thread | None = None
        self._stopping = False
        self._encoder: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.loop_span = loop_span
        self.running_batches = running_batches
        self.end_at_action = end_at_action

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the recipe (model directory and options), not the weights: the process that unpickles
        it (a Ray actor) loads the model from the same directory (shared storage on a cluster), once per
        process and recipe (:func:`_loaded`), however many batches ship it."""
        return (_loaded, (str(self.path), tuple(sorted(self._recipe.items()))))

    def _stop_ids(self) -> set[int]:
        ids: set[int] = set()
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        for value in eos if isinstance(eos, list) else [eos, self.tokenizer.eos_token_id]:
            if value is not None:
                ids.add(int(value))
        vocab = self.tokenizer.get_vocab()
        ids.update(vocab[t] for t in END_OF_TURN_TOKENS if t in vocab)
        if not ids:
            raise ConfigError(f"the model in {str(self.path)!r} has no end-of-turn token (eos_token_id)")
        return ids

    def weights_changed(self) -> None:
        """Forget cached key/values: they were computed with weights that an optimizer step has changed."""
        if self.reader.prefix is not None:
            self.reader.prefix.clear()

    # ------------------------------------------------------------------ async interface
    async def complete(self, request: ChatRequest) -> ChatResponse:
        future: asyncio.Future[ChatResponse] = asyncio.get_running_loop().create_future()
        with self._inbox_ready:
            if self._encoder is None:
                self._encoder = ThreadPoolExecutor(1, thread_name_prefix="reharness-hf-encode")
            if self._engine is None or not self._engine.is_alive():
                self._stopping = False
                self._engine = threading.Thread(target=self._serve, name="reharness-hf", daemon=True)
                self._engine.start()
            self._inbox.append(_Pending(request, future, self._encoder.submit(self.encode, request)))
            self._inbox_ready.notify()
        return await future

    def _serve(self) -> None:
        """The model thread: take the requests that arrive within ``batch_window_s`` of each other (at most
        ``max_wait_s`` after the first, at most ``max_batch_size``) and decode them together
        (:mod:`reharness.models.hf_decode`): as a unit answered when its longest reply ends, or with
        ``running_batches`` as a batch that answers each reply as it ends and that later requests join."""
        while True:
            with self._inbox_ready:
                while not self._inbox and not self._stopping:
                    self._inbox_ready.wait()
                if self._stopping:
                    return
                deadline = time.monotonic() + self.max_wait_s
                while len(self._inbox) < self.max_batch_size:
                    waiting, timeout = len(self._inbox), min(self.batch_window_s, deadline - time.monotonic())
                    if timeout <= 0 or not self._inbox_ready.wait(timeout) or len(self._inbox) == waiting:
                        break
                batch = self._take_inbox(self.max_batch_size)
            if not batch:  # every caller in it gave up waiting
                continue
            try:
                with self._lock:
                    if self.running_batches:
                        self._run(batch, admit=self._admit)
                    else:
                        self._run_as_unit(batch)
            except Exception as exc:  # never leave a caller waiting: the thread serves on
                failed = ChatResponse(error=f"hf backend: {type(exc).__name__}: {exc}"[:1000])
                for pending in batch:
                    self._deliver(pending, failed)

    def _run_as_unit(self, batch: list[_Pending]) -> None:
        """Decode ``batch`` with nothing joining and answer every request when its longest reply ends."""
        answers: list[tuple[_Pending, ChatResponse]] = []
        self._run(batch, answer=lambda pending, reply: answers.append((pending, reply)))
        for pending, reply in answers:
            self._deliver(pending, reply)

    def _take_inbox(self, limit: int) -> list[_Pending]:
        """Up to ``limit`` waiting requests whose callers still wait (call with the inbox lock held)."""
        taken: list[_Pending] = []
        while self._inbox and len(taken) < limit:
            pending = self._inbox.popleft()
            if pending.future is not None and not pending.future.done():
                taken.append(pending)
        return taken

    def _admit(self, running: int) -> list[Row]:
        """Rows that join a running batch: the waiting requests, once at least as many wait as rows run."""
        if not self._inbox or len(self._inbox) < running or running >= self.max_batch_size:
            return []
        with self._inbox_ready:
            joining = self._take_inbox(self.max_batch_size - running)
        self.stats.joins += bool(joining)
        return self._rows(joining)

    @staticmethod
    def _deliver(pending: _Pending, response: ChatResponse) -> None:
        future = pending.future
        if future is None:
            return

        def settle() -> None:
            if not future.done():
                future.set_result(response)

        with contextlib.suppress(RuntimeError):  # the caller's loop has closed: nobody waits for the reply
            future.get_loop().call_soon_threadsafe(settle)

    async def close(self) -> None:
        engine = self._engine
        with self._inbox_ready:
            self._stopping = True
            self._inbox_ready.notify_all()
        if engine is not None:
            await asyncio.to_thread(engine.join)
        self._engine = None
        with self._inbox_ready:  # requests that came in as it closed are answered, not left waiting
            closed = ChatResponse(error="hf backend: closed before this request was decoded")
            for pending in self._take_inbox(len(self._inbox)):
                self._deliver(pending, closed)
        if self._encoder is not None:
            self._encoder.shutdown(wait=True)
        self._encoder = None

    # ------------------------------------------------------------------ batched decoding (sync)
    def encode(self, request: ChatRequest) -> list[int]:
        """The prompt token ids of ``request`` (chat template + generation prompt)."""
        messages = template_messages(request.messages, self._structured_calls)
        kwargs: dict[str, Any] = {"add_generation_prompt": True, "tokenize": True, "return_dict": False}
        if request.tools:
            kwargs["tools"] = list(request.tools)
        if "sanitize_control_tokens" in inspect.signature(self.tokenizer.apply_chat_template).parameters:
            kwargs["sanitize_control_tokens"] = True  # env text cannot forge an end-of-turn token
        ids = self.tokenizer.apply_chat_template(messages, **kwargs)
        return [int(i) for i in (ids["input_ids"] if isinstance(ids, dict) else ids)]

    def generate_batch(
        self, requests: list[ChatRequest], prompts: list[Future[list[int]]] | None = None
    ) -> list[ChatResponse]:
        """Answer ``requests`` in one running batch that nothing else joins (blocking). Per-row errors become
        ``error`` responses. ``prompts``: the requests' token ids when they are being encoded elsewhere."""
        futures = prompts or [_done(self.encode, r) for r in requests]
        replies: dict[_Pending, ChatResponse] = {}
        pendings = [_Pending(r, None, f) for r, f in zip(requests, futures, strict=True)]
        with self._lock:  # one pass at a time: the model and the prefix cache are not thread-safe
            self._run(pendings, answer=replies.__setitem__)
        return [replies.get(p, ChatResponse(error="internal: no result")) for p in pendings]

    def _rows(self, pendings: list[_Pending], answer: Answer | None = None) -> list[Row]:
        """The rows of ``pendings``; a request that cannot be decoded (its chat template fails, its prompt
        fills the context) is answered at once with an error."""
        answer = answer or self._deliver
        rows: list[Row] = []
        for pending in pendings:
            try:
                prompt = pending.prompt.result()
            except Exception as exc:
                error = f"chat template failed: {type(exc).__name__}: {exc}"[:1000]
                answer(pending, ChatResponse(error=error))
                continue
            room = self.context_length - len(prompt)
            if room <= 0:
                error = context_overflow(len(prompt), self.context_length)
                answer(pending, ChatResponse(prompt_token_ids=tuple(prompt), error=error))
                continue
            max_new = min(pending.request.sampling.max_tokens, room)
            rows.append(Row.of(pending.request, prompt, max_new, pending))
        self.stats.requests += len(pendings)
        self.stats.sizes.append(len(pendings))
        self.stats.batches += 1
        return rows

    def _run(
        self,
        pendings: list[_Pending],
        answer: Answer | None = None,
        admit: Callable[[int], list[Row]] | None = None,
    ) -> None:
        """Decode ``pendings`` (and the rows ``admit`` lets join) as one running batch, answering each
        request as its reply ends; a failing pass answers every request still in it with the error."""
        answer = answer or self._deliver
        started = time.perf_counter()
        rows = self._rows(pendings, answer)
        batch = RunningBatch(
            self.reader,
            self.tokenizer,
            self.stop_ids,
            self._forward,
            self._step_mask,
            self.device,
            finish=lambda row: answer(row.tag, self._response(row)),
            admit=admit,
            loop_span=self.loop_span,
            end_at_action=self.end_at_action,
        )
        try:
            if rows:
                batch.run(rows)
        except Exception as exc:  # a failing pass is recorded by every episode in it
            error = ChatResponse(error=f"hf backend: {type(exc).__name__}: {exc}"[:1000])
            for row in batch.unfinished:
                answer(row.tag, error)
        self.stats.max_batch = max(self.stats.max_batch, batch.widest, len(pendings))
        self.stats.prefill_seconds += batch.prefill_seconds
        self.stats.model_seconds += time.perf_counter() - started

    def _response(self, row: Row) -> ChatResponse:
        ids = row.ids
        text = self.tokenizer.decode(
            ids[:-1] if ids and ids[-1] in self.stop_ids else ids, skip_special_tokens=True
        )
        return ChatResponse(
            text=text,
            tool_calls=parse_text_tool_calls(text) if row.request.tools else (),
            prompt_token_ids=tuple(row.prompt),
            completion_token_ids=tuple(ids),
            logprobs=tuple(row.logprobs),
        )

    def _step_mask(self, mask: Any) -> Any:
        """The attention mask of one decoding step. With SDPA attention, the 4-D boolean mask that
        transformers would build from ``mask`` (one query sees every cached position the mask keeps), given
        ready-made: building it inside the model costs about a sixth of a step on a CPU."""
        if self._sdpa:
            return mask.bool()[:, None, None, :]
        return mask

    def _forward(self, ids: Any, mask: Any, positions: Any, cache: Any) -> Any:
        return self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=True,
            logits_to_keep=1,
            **{self._cache_kw: cache},
        )

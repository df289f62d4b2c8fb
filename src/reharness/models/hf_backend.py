"""In-process Hugging Face causal LM backend (``hf:PATH``) with micro-batching and per-request seeds.

Any model directory that ``AutoModelForCausalLM`` and ``AutoTokenizer`` load and whose tokenizer has a chat
template works. Why a hand-written decoding loop instead of ``model.generate``: ``generate`` samples from the
global torch RNG, so the tokens a request gets would depend on which other requests share its batch. Here
every row samples from its own ``torch.Generator`` seeded with ``request.seed`` (greedy when temperature is
0), so a rerun with the same seeds reproduces the same outputs whatever the batch composition.

**Micro-batching.** Concurrent episodes call :meth:`HFBackend.complete`; requests that arrive within
``batch_window_s`` of each other (at most ``max_wait_s`` after the first, at most ``max_batch_size``) are
left-padded into one batch — attention mask and explicit position ids, so padding does not shift positions —
and decoded together with a KV cache in one worker thread, while the event loop keeps stepping environments.
Requests that arrive during a pass form the next batch; rows leave the batch as soon as they finish. Prompts
reuse the key/value cache of the longest prefix they share with a recent sequence (an episode's previous
prompt and reply), bounded by ``prefix_cache_mb`` (:mod:`reharness.models.hf_cache`).

**Residual nondeterminism.** With the same seeds and the same batch composition outputs are bit-identical.
A different batch composition changes tensor shapes, and CPU/GPU kernels may then sum in another order, so
logits can differ in the last bits; this can flip a greedy near-tie or a sampled token at a CDF boundary.
``benchmarks/bench_backends.py`` and ``tests/models/test_hf_backend.py`` measure how often a whole reply
differs between batch size 1 and batched decoding (on CPU, float32: 0 of 24 replies, and 0 of 32 household
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
import inspect
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reharness.core.agent import Agent
from reharness.core.errors import ConfigError
from reharness.core.types import ChatRequest, ChatResponse
from reharness.models.base import parse_text_tool_calls, template_messages
from reharness.models.hf_cache import PromptReader, cache_of, supports_reuse
from reharness.models.hf_sampling import constrained_token, sample_token

END_OF_TURN_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>")


@dataclass
class BatchStats:
    """Counters of the micro-batcher (for benchmarks and logs)."""

    batches: int = 0
    requests: int = 0
    max_batch: int = 0
    model_seconds: float = 0.0
    prefill_seconds: float = 0.0  # of model_seconds: reading prompts (the rest is decoding and tokenising)
    sizes: list[int] = field(default_factory=list)

    @property
    def mean_batch(self) -> float:
        return self.requests / max(1, self.batches)


@dataclass
class _Pending:
    request: ChatRequest
    future: asyncio.Future[ChatResponse]
    prompt: Future[list[int]]  # the request's token ids, encoded while earlier passes run


def load_model_dir(path: str | Path, device: str = "cpu", dtype: str | None = None) -> tuple[Any, Any]:
    """Load ``(tokenizer, model)`` from a local model directory with clear errors (never from a hub)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = Path(path).expanduser()
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
        loaded: tuple[Any, Any] | None = None,
    ) -> None:
        import torch

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
        self._queue: asyncio.Queue[_Pending] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._worker: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._encoder: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

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
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._worker is None or self._worker.done():
            self._loop, self._queue = loop, asyncio.Queue()
            self._worker = loop.create_task(self._batcher())
        assert self._queue is not None
        future: asyncio.Future[ChatResponse] = loop.create_future()
        if self._encoder is None:
            self._encoder = ThreadPoolExecutor(1, thread_name_prefix="reharness-hf-encode")
        self._queue.put_nowait(_Pending(request, future, self._encoder.submit(self.encode, request)))
        return await future

    async def _batcher(self) -> None:
        assert self._queue is not None
        queue, loop = self._queue, asyncio.get_running_loop()
        while True:
            batch = [await queue.get()]
            deadline = loop.time() + self.max_wait_s
            while len(batch) < self.max_batch_size:
                if not queue.empty():
                    batch.append(queue.get_nowait())
                    continue
                timeout = min(self.batch_window_s, deadline - loop.time())
                if timeout <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(queue.get(), timeout))
                except TimeoutError:
                    break
            live = [p for p in batch if not p.future.done()]
            if not live:
                continue
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="reharness-hf")
            try:
                results = await loop.run_in_executor(
                    self._executor, self.generate_batch, [p.request for p in live], [p.prompt for p in live]
                )
            except Exception as exc:  # a failing pass is recorded by every episode in it
                results = [ChatResponse(error=f"hf backend: {type(exc).__name__}: {exc}"[:1000])] * len(live)
            for pending, result in zip(live, results, strict=True):
                if not pending.future.done():
                    pending.future.set_result(result)

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        for pool in (self._executor, self._encoder):
            if pool is not None:
                pool.shutdown(wait=True)
        self._executor = self._encoder = None

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
        """Answer ``requests`` in one decoding pass (blocking). Per-row errors become ``error`` responses.

        ``prompts``: the requests' token ids being encoded elsewhere (:meth:`complete` encodes each request
        in a thread of its own as it arrives, so tokenising overlaps the passes before it)."""
        with self._lock:  # one pass at a time: the model and the prefix cache are not thread-safe
            return self._generate_batch(requests, prompts)

    def _generate_batch(
        self, requests: list[ChatRequest], prompts: list[Future[list[int]]] | None
    ) -> list[ChatResponse]:
        started = time.perf_counter()
        results: list[ChatResponse | None] = [None] * len(requests)
        rows: list[tuple[int, list[int], int]] = []
        for i, request in enumerate(requests):
            try:
                prompt = self.encode(request) if prompts is None else prompts[i].result()
            except Exception as exc:
                results[i] = ChatResponse(error=f"chat template failed: {type(exc).__name__}: {exc}"[:1000])
                continue
            room = self.context_length - len(prompt)
            if room <= 0:
                results[i] = ChatResponse(
                    prompt_token_ids=tuple(prompt),
                    error=f"prompt has {len(prompt)} tokens; the model's context is {self.context_length} "
                    "(shorten the history: harness history_window)",
                )
                continue
            rows.append((i, prompt, min(request.sampling.max_tokens, room)))
        if rows:
            decoded = self._decode(
                [p for _, p, _ in rows], [requests[i] for i, _, _ in rows], [m for *_, m in rows]
            )
            for (i, prompt, _), (ids, logprobs) in zip(rows, decoded, strict=True):
                results[i] = self._response(requests[i], prompt, ids, logprobs)
        self.stats.batches += 1
        self.stats.requests += len(requests)
        self.stats.max_batch = max(self.stats.max_batch, len(requests))
        self.stats.sizes.append(len(requests))
        self.stats.model_seconds += time.perf_counter() - started
        return [r if r is not None else ChatResponse(error="internal: no result") for r in results]

    def _response(
        self, request: ChatRequest, prompt: list[int], ids: list[int], logprobs: list[float]
    ) -> ChatResponse:
        content = ids[:-1] if ids and ids[-1] in self.stop_ids else ids
        text = self.tokenizer.decode(content, skip_special_tokens=True)
        return ChatResponse(
            text=text,
            tool_calls=parse_text_tool_calls(text) if request.tools else (),
            prompt_token_ids=tuple(prompt),
            completion_token_ids=tuple(ids),
            logprobs=tuple(logprobs),
        )

    def _decode(
        self, prompts: list[list[int]], requests: list[ChatRequest], max_new: list[int]
    ) -> list[tuple[list[int], list[float]]]:
        import torch

        n = len(prompts)
        temps = torch.tensor([r.sampling.temperature for r in requests], dtype=torch.float32)
        greedy = temps == 0
        scale = torch.where(greedy, torch.ones_like(temps), temps)[:, None]
        generators = [torch.Generator().manual_seed(r.seed & 0x7FFF_FFFF_FFFF_FFFF) for r in requests]
        out_ids: list[list[int]] = [[] for _ in range(n)]
        out_lp: list[list[float]] = [[] for _ in range(n)]
        scans = [0] * n  # constrained rows: scans for viable tokens so far
        with torch.inference_mode():
            started = time.perf_counter()
            cache, mask, logits = self.reader.read(prompts, max(max_new))
            self.stats.prefill_seconds += time.perf_counter() - started
            active = list(range(n))
            positions = torch.tensor([len(p) for p in prompts], dtype=torch.long)
            while True:
                rows = torch.tensor(active)
                logp = torch.log_softmax(logits.float().cpu() / scale[rows], dim=-1)
                chosen = logp.argmax(-1)
                finished: list[int] = []
                for r, i in enumerate(active):
                    if not greedy[i]:
                        chosen[r] = sample_token(logp[r], requests[i].sampling.top_p, generators[i])
                    constraint = requests[i].constraint
                    if constraint is not None:
                        chosen[r] = constrained_token(
                            self.tokenizer,
                            self.stop_ids,
                            constraint,
                            out_ids[i],
                            logp[r],
                            int(chosen[r]),
                            requests[i],
                            generators[i],
                            scans,
                            i,
                        )
                    token = int(chosen[r])
                    out_ids[i].append(token)
                    out_lp[i].append(float(logp[r, token]))
                    if token in self.stop_ids or len(out_ids[i]) >= max_new[i]:
                        finished.append(r)
                if finished:
                    for r in finished:  # keep what the model read (prompt + reply but the last token)
                        i = active[r]
                        self.reader.remember(prompts[i], out_ids[i][:-1], cache, r, i, mask[r])
                    keep = [r for r in range(len(active)) if r not in set(finished)]
                    if not keep:
                        break
                    index = torch.tensor(keep)
                    cache.batch_select_indices(index.to(self.device))
                    mask, chosen, positions = mask[index], chosen[index], positions[index]
                    active = [active[r] for r in keep]
                mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=1)
                out = self._forward(chosen[:, None], self._step_mask(mask), positions[:, None], cache)
                cache, logits = cache_of(out), out.logits[:, -1, :]
                positions = positions + 1
        return list(zip(out_ids, out_lp, strict=True))

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

"""The hf backend's decoding loop: rows decoded together, each leaving as its reply ends.

A :class:`RunningBatch` reads its rows' prompts (:class:`~reharness.models.hf_cache.PromptReader`), then
chooses one token per row per step (each request's own generator: :mod:`reharness.models.hf_sampling`).
A row ends at an end-of-turn token, at its reply budget, when its reply has fallen into a loop
(:func:`in_loop`), or (``end_at_action``) once it holds a whole action (the request's ``complete``); it
leaves the batch at once, its cache goes to the prefix cache and its reply to the
caller, so an episode does not wait for the batch's longest reply to get its own.

**Loops.** Small models fall into repetition ("easy to carry easy to carry …") and then run to the
reply budget: about 70 % of the tokens the tiny agents generated in the WebShop-like and DBBench-like
kits were such loops, and every later prompt of the episode carries the loop again. Cutting a reply where
the loop is recognised made 40 WebShop-like episodes 2.8× faster and 40 DBBench-like episodes 13.9× faster,
at the same success (``benchmarks/bench_decoding.py``; docs/performance.md).

**Running batches** (``admit``; continuous batching, as in vLLM or TGI): requests that arrive while a batch
decodes have their prompts read apart and their rows merged into it
(:func:`~reharness.models.hf_cache.merge_batches`), once at least as many wait as rows run, so a join's copy
is at most the size of the batch it builds. The backend leaves this off by default: on a CPU a decoding step
costs about 1.6 ms plus 0.2 ms per thousand cached row-tokens (the tiny agents, 2 threads), so sharing steps
saves little, while rows of other lengths padded into one batch cost more — it measured 0.88-0.89× on the
ALFWorld-like and WebShop-like kits. On an accelerator, where a step's fixed cost dominates, the balance
differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reharness.core.types import ChatRequest
from reharness.models.hf_cache import PromptReader, cache_of, merge_batches, row_kv
from reharness.models.hf_sampling import constrained_token, sample_token


@dataclass(eq=False)
class Row:
    """One request being decoded: its prompt ids, reply budget, generator and the reply so far."""

    request: ChatRequest
    prompt: list[int]
    max_new: int
    generator: Any  # torch.Generator seeded with the request's seed
    tag: Any = None  # the caller's handle (an index, a pending request)
    extends: int | None = None  # the prefix-cache entry the prompt continues (retired when this is stored)
    ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    scans: int = 0  # constrained rows: scans for viable tokens so far

    @classmethod
    def of(cls, request: ChatRequest, prompt: list[int], max_new: int, tag: Any = None) -> Row:
        import torch

        generator = torch.Generator().manual_seed(request.seed & 0x7FFF_FFFF_FFFF_FFFF)
        return cls(request, prompt, max_new, generator, tag)

    @property
    def room(self) -> int:
        return self.max_new - len(self.ids)


#: Room for the reply a read leaves in each row's cache; a longer reply grows it (the buffers double), so the
#: copies a batch makes (a finished row leaving, rows joining) do not carry a whole reply budget of room.
REPLY_ROOM = 32

#: A reply whose last ``loop_span`` tokens repeat with a period of at most this many tokens is in a loop.
LOOP_PERIOD = 32


def in_loop(ids: list[int], span: int) -> bool:
    """Whether the reply ``ids`` ends in a loop: its last ``span + p`` tokens repeat one span of ``p <=
    LOOP_PERIOD`` tokens (with ``span`` 64: a 4-token phrase 17 times, a 32-token sentence 3 times).

    Why: small models fall into such loops (the tiny agents: about 70 % of the tokens they generate in the
    WebShop-like and DBBench-like kits, replies that run to the 512-token budget repeating "easy to carry"),
    and every later prompt of the episode carries the loop too. The reply is cut where the loop is recognised,
    as a budget cut would;
    ``span`` 0 turns this off. Checked every 8 tokens, so it costs a few list comparisons per row."""
    n = len(ids)
    if span <= 0 or n < span + 1 or n % 8:
        return False
    tail = ids[-span:]
    return any(ids[n - span - p : n - p] == tail for p in range(1, min(LOOP_PERIOD, n - span) + 1))


Step = Callable[[Any, Any, Any, Any], Any]  # (ids, step mask, positions, cache) -> model output


class RunningBatch:
    """Decodes rows together until all have finished (an end-of-turn token, the reply budget, or a loop:
    :func:`in_loop`), calling ``finish(row)`` as each one does and ``admit(running)`` (the number of rows
    still decoding) after each step for rows that join."""

    def __init__(
        self,
        reader: PromptReader,
        tokenizer: Any,
        stop_ids: set[int],
        step: Step,
        step_mask: Callable[[Any], Any],
        device: str,
        finish: Callable[[Row], None],
        admit: Callable[[int], list[Row]] | None = None,
        loop_span: int = 0,
        end_at_action: bool = False,
    ) -> None:
        self.reader, self.tokenizer, self.stop_ids = reader, tokenizer, stop_ids
        self.step, self.step_mask, self.device = step, step_mask, device
        self.finish, self.admit = finish, admit
        self.loop_span = loop_span  # a reply that ends in a loop this long is cut (:func:`in_loop`; 0: never)
        self.end_at_action = end_at_action  # a reply ends once it holds a whole action (request.complete)
        self.active: list[Row] = []  # the rows of the batch cache, in its order
        self.unfinished: list[Row] = []  # every row taken in whose reply has not ended (joining ones too)
        self.prefill_seconds = 0.0
        self.widest = 0  # most rows decoded together

    def run(self, rows: list[Row]) -> None:
        import torch

        self.unfinished = list(rows)
        with torch.inference_mode():
            cache, mask, logits = self._read(rows)
            self.active = rows
            while self.active:
                chosen = self._choose(logits)
                kept = [
                    r for r, row in enumerate(self.active) if not self._done(r, row, chosen[r], cache, mask)
                ]
                if kept:
                    if len(kept) < len(self.active):
                        index = torch.tensor(kept)
                        cache.batch_select_indices(index.to(self.device))
                        mask, chosen = mask[index], chosen[index]
                        self.active = [self.active[r] for r in kept]
                    mask = torch.cat([mask, torch.ones((len(self.active), 1), dtype=torch.long)], dim=1)
                    positions = torch.tensor([[self._read_so_far(row)] for row in self.active])
                    out = self.step(chosen[:, None], self.step_mask(mask), positions, cache)
                    cache, logits = cache_of(out), out.logits[:, -1, :]
                else:
                    self.active = []
                joining = self.admit(len(self.active)) if self.admit is not None and self.reader.reuse else []
                if joining:  # the newcomers' prompts are read apart, then their rows join the running ones
                    self.unfinished += joining
                    new_cache, new_mask, new_logits = self._read(joining)
                    if self.active:
                        cache, mask = merge_batches(cache, mask, new_cache, new_mask, self.reader.config)
                        logits = torch.cat([logits, new_logits])
                    else:
                        cache, mask, logits = new_cache, new_mask, new_logits
                    self.active = self.active + joining
                    self.widest = max(self.widest, len(self.active))
        self.active = []

    @staticmethod
    def _read_so_far(row: Row) -> int:
        """Tokens of ``row`` the model has read: its prompt and its reply but the last token."""
        return len(row.prompt) + len(row.ids) - 1

    def _read(self, rows: list[Row]) -> tuple[Any, Any, Any]:
        """Read the prompts of ``rows`` (with room for their replies) into a batch cache."""
        import time

        started = time.perf_counter()
        cache, mask, logits = self.reader.read(
            [row.prompt for row in rows], min(REPLY_ROOM, max(r.room for r in rows))
        )
        for row, extends in zip(rows, self.reader.extends, strict=True):
            row.extends = extends
        self.widest = max(self.widest, len(rows))
        self.prefill_seconds += time.perf_counter() - started
        return cache, mask, logits

    def _choose(self, logits: Any) -> Any:
        """Each active row's next token (greedy, or sampled with the row's generator; constrained rows
        redraw until viable); records each token's log-probability."""
        import torch

        temps = torch.tensor([row.request.sampling.temperature for row in self.active], dtype=torch.float32)
        scale = torch.where(temps == 0, torch.ones_like(temps), temps)[:, None]
        logp = torch.log_softmax(logits.float().cpu() / scale, dim=-1)
        chosen = logp.argmax(-1)
        for r, row in enumerate(self.active):
            sampling = row.request.sampling
            if sampling.temperature != 0:
                chosen[r] = sample_token(logp[r], sampling.top_p, row.generator)
            if row.request.constraint is not None:
                chosen[r], row.scans = constrained_token(
                    self.tokenizer,
                    self.stop_ids,
                    row.request.constraint,
                    row.ids,
                    logp[r],
                    int(chosen[r]),
                    row.request,
                    row.generator,
                    row.scans,
                )
            row.logprobs.append(float(logp[r, int(chosen[r])]))
            row.ids.append(int(chosen[r]))
        return chosen

    def _action_complete(self, row: Row) -> bool:
        """Whether ``row``'s reply holds a whole action (the request's ``complete`` check, run only when
        ``end_at_action`` and when the last token can have closed one: it holds a newline, a backtick or
        a ``>``)."""
        check = row.request.complete
        if not self.end_at_action or check is None:
            return False
        last = self.tokenizer.decode(row.ids[-1:])
        if not any(mark in last for mark in ("\n", "`", ">")):
            return False
        return bool(check(self.tokenizer.decode(row.ids, skip_special_tokens=True)))

    def _done(self, r: int, row: Row, token: Any, cache: Any, mask: Any) -> bool:
        """Whether ``row`` (batch row ``r``) has finished with ``token``; a finished row's cache (what the
        model read: the prompt and the reply but its last token) goes to the prefix cache and its reply to
        ``finish``."""
        if (
            int(token) not in self.stop_ids
            and len(row.ids) < row.max_new
            and not in_loop(row.ids, self.loop_span)
            and not self._action_complete(row)
        ):
            return False
        if self.reader.prefix is not None:
            n = self._read_so_far(row)
            kv = [(k[:, -n:], v[:, -n:]) for k, v in row_kv(cache, r, mask[r], self.device)]
            self.reader.remember(row.prompt, row.ids[:-1], kv, row.extends)
        self.unfinished.remove(row)
        self.finish(row)
        return True

"""Key/value-cache machinery of the hf backend: prefix reuse, chunked prompt reading, in-place decoding.

Why: on a CPU, reading prompts (the prefill) costs more than generating short replies, and an agent's
prompt at step t is its prompt at step t-1 plus its reply and one observation. :class:`PromptReader` keeps
the key/value caches of recent sequences (:class:`PrefixCache`, an LRU bounded in bytes) so a prompt only
reads the tokens after the longest prefix it shares with one of them (all prompts also share the system
prompt). Rows are read in chunks whose attention-score matrices stay under a budget (bounded memory with
64 concurrent episodes), then reassembled into one left-padded batch cache whose layers preallocate room
for the reply, so decoding writes each token in place instead of copying the whole cache. A read that
fits one chunk — the usual case: each episode's next step, a few dozen new tokens after a long cached
prefix — skips the reassembly: its pass runs on buffers that already have the room, and decoding continues
in them (``benchmarks/bench_decoding.py --arms general,in-place`` measures the two paths side by side).

All of this needs the standard per-layer cache of transformers (``DynamicLayer``: Llama, Qwen, Mistral
without sliding windows, …); other models are read in one padded pass without reuse
(:func:`supports_reuse`). Reused prefixes were computed in other batch shapes, one more source of last-bit
differences (see :mod:`reharness.models.hf_backend`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

KV = list[tuple[Any, Any]]  # per layer: (keys, values), each (heads, length, head_dim)
Forward = Callable[[Any, Any, Any, Any], Any]  # (ids, mask, positions, cache) -> model output


def cache_of(out: Any) -> Any:
    """The cache a forward pass returned (``cache`` in transformers 5, ``past_key_values`` before)."""
    return getattr(out, "cache", None) or getattr(out, "past_key_values", None)


def supports_reuse(model: Any, cache_kw: str) -> bool:
    """Whether ``model`` keeps plain per-layer key/value caches, so reuse and reassembly are exact."""
    try:
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        layers = DynamicCache(config=model.config).layers
    except Exception:
        return False
    return bool(layers) and cache_kw == "cache" and all(type(x) is DynamicLayer for x in layers)


class PrefixCache:
    """LRU of the key/value caches of recent token sequences (a prompt and its reply), bounded in bytes.

    A prompt that contains a stored sequence's whole prompt continues that conversation (the next step of
    the episode); once its own sequence is stored, the older one is retired, so the cache holds about one
    entry per live episode even when a reply re-tokenises differently from how it was generated.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.entries: OrderedDict[int, tuple[Any, KV, int, int]] = OrderedDict()  # tokens, kv, bytes, prompt
        self._next = 0
        self._matrix: tuple[list[int], Any] | None = None  # (keys, padded token matrix) for lookups

    def lookup(self, prompt: list[int]) -> tuple[KV, int, int | None]:
        """``(kv, n, key)``: the cache of the longest stored prefix of ``prompt`` (at most all but its last
        token) and its length; ``key`` names the entry when ``prompt`` continues its conversation."""
        import torch

        if not self.entries or len(prompt) < 2:
            return [], 0, None
        if self._matrix is None:
            keys = list(self.entries)
            rows = [self.entries[k][0] for k in keys]
            self._matrix = (keys, torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=-1))
        keys, matrix = self._matrix
        m = min(matrix.shape[1], len(prompt) - 1)
        common = (matrix[:, :m] == torch.tensor(prompt[:m], dtype=torch.long)).cumprod(dim=1).sum(dim=1)
        best_len, best = (int(x) for x in common.max(dim=0))
        if best_len == 0:
            return [], 0, None
        _, kv, _, prompt_len = self.entries[keys[best]]
        self.entries.move_to_end(keys[best])
        continues = keys[best] if best_len >= prompt_len else None
        return [(k[:, :best_len], v[:, :best_len]) for k, v in kv], best_len, continues

    def clear(self) -> None:
        self.entries.clear()
        self.bytes, self._matrix = 0, None

    def store(self, tokens: list[int], kv: KV, prompt_len: int, replaces: int | None = None) -> None:
        """Store ``kv`` for ``tokens`` (a prompt of ``prompt_len`` tokens and its reply); ``replaces``
        retires the entry whose conversation they continue."""
        import torch

        self._matrix = None
        if replaces is not None and replaces in self.entries:
            self.bytes -= self.entries.pop(replaces)[2]
        size = sum(k.element_size() * k.nelement() + v.element_size() * v.nelement() for k, v in kv)
        if size > self.max_bytes:
            return
        self.entries[self._next] = (torch.tensor(tokens, dtype=torch.long), kv, size, prompt_len)
        self._next += 1
        self.bytes += size
        while self.bytes > self.max_bytes:
            self.bytes -= self.entries.popitem(last=False)[1][2]


_LAYER_TYPE: type | None = None


def preallocated_layer(keys: Any, values: Any, length: int) -> Any:
    """A ``DynamicLayer`` over buffers with room past ``length``: each new token is written in place."""
    global _LAYER_TYPE
    if _LAYER_TYPE is None:
        from transformers.cache_utils import DynamicLayer

        class PreallocatedLayer(DynamicLayer):  # type: ignore[misc]
            def __init__(self, keys: Any, values: Any, length: int) -> None:
                super().__init__()
                self.buffers, self.length = (keys, values), length
                self.lazy_initialization(keys, values)
                self._views()

            def _views(self) -> None:
                self.keys = self.buffers[0][:, :, : self.length]
                self.values = self.buffers[1][:, :, : self.length]

            def update(
                self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any
            ) -> tuple[Any, Any]:
                n, size = key_states.shape[-2], self.buffers[0].shape[2]
                if self.length + n > size:  # out of room: double, like a growing array
                    grown = [
                        b.new_zeros((*b.shape[:2], size + max(n, size), b.shape[3])) for b in self.buffers
                    ]
                    grown[0][:, :, : self.length], grown[1][:, :, : self.length] = self.keys, self.values
                    self.buffers = (grown[0], grown[1])
                self.buffers[0][:, :, self.length : self.length + n] = key_states
                self.buffers[1][:, :, self.length : self.length + n] = value_states
                self.length += n
                self._views()
                return self.keys, self.values

            def batch_select_indices(self, indices: Any) -> None:
                self.buffers = (self.buffers[0][indices], self.buffers[1][indices])
                self._views()

        _LAYER_TYPE = PreallocatedLayer
    return _LAYER_TYPE(keys, values, length)


def stack_rows(rows: list[KV], width: int, config: Any, room: int = 0) -> Any:
    """A ``DynamicCache`` holding each row's keys/values left-padded to ``width`` (+ ``room`` to grow)."""
    import torch
    from transformers import DynamicCache

    cache = DynamicCache(config=config)
    template = next(row for row in rows if row)  # a row with a reused prefix gives the layers' shapes
    for layer in range(len(template)):
        k0 = template[layer][0]
        # padding must be finite (it is masked, but 0 x NaN is NaN); the room is written before it is read
        keys = k0.new_empty((len(rows), k0.shape[0], width + room, k0.shape[-1]))
        keys[:, :, :width] = 0
        values = torch.empty_like(keys)
        values[:, :, :width] = 0
        for r, row in enumerate(rows):
            if not row:
                continue
            k, v = row[layer]
            if k.shape[1]:
                keys[r, :, width - k.shape[1] : width], values[r, :, width - v.shape[1] : width] = k, v
        if room:
            cache.layers[layer] = preallocated_layer(keys, values, width)
        else:
            cache.update(keys, values, layer)
    return cache


def merge_batches(first: Any, first_mask: Any, second: Any, second_mask: Any, config: Any) -> tuple[Any, Any]:
    """``(cache, mask)`` of two batch caches stacked (the first's rows, then the second's), each left-padded
    to the longer one, with the room of the roomier (their preallocated buffers past the cached length)."""
    import torch
    from transformers import DynamicCache

    width = max(first_mask.shape[1], second_mask.shape[1])
    masks = [torch.nn.functional.pad(m, (width - m.shape[1], 0)) for m in (first_mask, second_mask)]
    room = max(_room(layer) for c in (first, second) for layer in c.layers)
    rows = first_mask.shape[0] + second_mask.shape[0]
    cache = DynamicCache(config=config)
    for index, (a, b) in enumerate(zip(first.layers, second.layers, strict=True)):
        keys = a.keys.new_zeros((rows, a.keys.shape[1], width + room, a.keys.shape[-1]))
        values = torch.zeros_like(keys)
        for start, layer in ((0, a), (a.keys.shape[0], b)):
            n, length = layer.keys.shape[0], layer.keys.shape[2]
            keys[start : start + n, :, width - length : width] = layer.keys
            values[start : start + n, :, width - length : width] = layer.values
        cache.layers[index] = preallocated_layer(keys, values, width)
    return cache, torch.cat(masks)


def _room(layer: Any) -> int:
    buffers = getattr(layer, "buffers", None)
    return 0 if buffers is None else int(buffers[0].shape[2] - layer.length)


def chunk_rows(shapes: list[tuple[int, int]], budget: int) -> list[list[int]]:
    """Group rows ``(reused, new tokens)`` so that rows x new x (reused + new) stays within ``budget``."""
    chunks: list[list[int]] = []
    past = new = 0
    for i, (kept, rest) in enumerate(shapes):
        grown_past, grown_new = max(past, kept), max(new, rest)
        if chunks and (len(chunks[-1]) + 1) * grown_new * (grown_past + grown_new) <= budget:
            chunks[-1].append(i)
            past, new = grown_past, grown_new
        else:
            chunks.append([i])
            past, new = kept, rest
    return chunks


class PromptReader:
    """Reads a batch of prompts into a left-padded decode cache, reusing cached prefixes."""

    def __init__(
        self,
        forward: Forward,
        config: Any,
        pad_id: int,
        device: str,
        reuse: bool,
        prefix_cache_bytes: int,
        budget: int,
    ) -> None:
        self.forward, self.config, self.pad_id, self.device = forward, config, pad_id, device
        self.reuse, self.budget = reuse, budget
        self.prefix = PrefixCache(prefix_cache_bytes) if reuse and prefix_cache_bytes > 0 else None
        self.reused_tokens = self.read_tokens = 0
        self.in_place = True  # single-chunk reads write into the decode cache (off: the general path)
        self.reads_in_place = 0
        self.extends: list[int | None] = []  # per prompt of the last read: the entry it wholly extends

    def read(self, prompts: list[list[int]], room: int) -> tuple[Any, Any, Any]:
        """``(cache, mask, last-token logits)`` for the prompts; the cache has ``room`` to grow per row."""
        import torch

        if not self.reuse:  # a model with its own cache layout: one padded pass
            self.extends = [None] * len(prompts)
            full, width = self._compact_mask(prompts)
            ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
            for r, p in enumerate(prompts):
                ids[r, width - len(p) :] = torch.tensor(p)
            out = self.forward(ids, full, (full.cumsum(-1) - 1).clamp(min=0), None)
            self.read_tokens += sum(len(p) for p in prompts)
            return cache_of(out), full, out.logits[:, -1, :]
        found = [self.prefix.lookup(p) if self.prefix else ([], 0, None) for p in prompts]
        reuse, self.extends = [(kv, n) for kv, n, _ in found], [key for *_, key in found]
        self.reused_tokens += sum(n for _, n in reuse)
        self.read_tokens += sum(len(p) - n for p, (_, n) in zip(prompts, reuse, strict=True))
        chunks = chunk_rows([(n, len(p) - n) for p, (_, n) in zip(prompts, reuse, strict=True)], self.budget)
        if self.in_place and len(chunks) == 1 and any(n for _, n in reuse):
            return self._read_in_place(prompts, reuse, room)
        full, width = self._compact_mask(prompts)
        rows: list[KV] = [[] for _ in prompts]
        logits: list[Any] = [None] * len(prompts)
        for chunk in chunks:
            past = max(reuse[i][1] for i in chunk)
            ids, mask, positions = self._layout([prompts[i] for i in chunk], [reuse[i][1] for i in chunk])
            cache = stack_rows([reuse[i][0] for i in chunk], past, self.config) if past else None
            out = self.forward(ids, mask, positions, cache)
            layers = cache_of(out).layers
            for r, i in enumerate(chunk):
                valid = mask[r].bool().to(self.device)
                rows[i] = [(layer.keys[r][:, valid], layer.values[r][:, valid]) for layer in layers]
                logits[i] = out.logits[r, -1, :]
        return stack_rows(rows, width, self.config, room), full, torch.stack(logits)

    @staticmethod
    def _compact_mask(prompts: list[list[int]]) -> tuple[Any, int]:
        """``(mask, width)`` of the prompts left-padded to the longest, without gaps (the compact layout)."""
        import torch

        width = max(len(p) for p in prompts)
        full = torch.zeros((len(prompts), width), dtype=torch.long)
        for r, p in enumerate(prompts):
            full[r, width - len(p) :] = 1
        return full, width

    def _layout(self, prompts: list[list[int]], kept: list[int]) -> tuple[Any, Any, Any]:
        """``(ids, mask, positions)`` of one pass over the prompts' new tokens after their reused prefixes;
        the layout per row is ``[pad | reused | pad | new tokens]``."""
        import torch

        past, new = max(kept), max(len(p) - k for p, k in zip(prompts, kept, strict=True))
        ids = torch.full((len(prompts), new), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), past + new), dtype=torch.long)
        positions = torch.zeros((len(prompts), new), dtype=torch.long)
        for r, (prompt, k) in enumerate(zip(prompts, kept, strict=True)):
            rest = prompt[k:]
            ids[r, new - len(rest) :] = torch.tensor(rest)
            mask[r, past - k : past] = 1
            mask[r, past + new - len(rest) :] = 1
            positions[r, new - len(rest) :] = torch.arange(k, k + len(rest))
        return ids, mask, positions

    def _read_in_place(
        self, prompts: list[list[int]], reuse: list[tuple[KV, int]], room: int
    ) -> tuple[Any, Any, Any]:
        """One pass whose cache is already the decode cache: the reused prefixes are copied once into buffers
        with room for the new tokens and the reply, and the pass writes the new tokens in place. The padding
        between a row's reused prefix and its new tokens stays (masked): cheaper than copying every row out
        of the pass's cache and into a compact one, as the general path does. Most reads are this case: each
        episode's next step, a few dozen new tokens after a long cached prefix."""
        self.reads_in_place += 1
        kept = [n for _, n in reuse]
        ids, mask, positions = self._layout(prompts, kept)
        cache = stack_rows([kv for kv, _ in reuse], max(kept), self.config, room=ids.shape[1] + room)
        out = self.forward(ids, mask, positions, cache)
        return cache_of(out), mask, out.logits[:, -1, :]

    def remember(self, prompt: list[int], reply: list[int], kv: KV, replaces: int | None) -> None:
        """Store ``kv``, the cache of ``prompt`` and ``reply`` (:func:`row_kv`); ``replaces`` (an entry of
        :attr:`extends`) retires the entry the prompt continued."""
        if self.prefix is not None:
            self.prefix.store(prompt + reply, kv, len(prompt), replaces)


def row_kv(cache: Any, row: int, mask: Any, device: str) -> KV:
    """The keys/values of batch row ``row`` at the positions its attention mask ``mask`` keeps, in order."""
    valid = mask.bool().to(device)
    return [(layer.keys[row][:, valid], layer.values[row][:, valid]) for layer in cache.layers]

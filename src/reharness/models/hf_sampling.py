"""Token choice of the in-process decoder: top-p sampling with a row's own generator, and the grammar
constraint of a constrained request (:attr:`reharness.core.types.ChatRequest.constraint`).

Kept apart from :mod:`reharness.models.hf_backend` (the batching, prefill and cache work) because the
constraint's rules — which candidates a rejected draw is redrawn among, when a scan stops, when a reply
that cannot become valid ends — are a policy of their own. Everything here is deterministic given the
row's generator, so constrained decoding stays seeded and reproducible.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reharness.core.types import ChatRequest

#: Most likely tokens scanned for viable ones when a constrained row's draw is rejected.
CONSTRAINT_SCAN = 2048
#: Viable tokens (the most likely first) a rejected draw is redrawn among.
CONSTRAINT_KEEP = 16
#: A scan also stops, once it holds a viable token, when the tokens scanned carry this much probability.
CONSTRAINT_MASS = 0.999
#: Scans one reply may make; a reply that keeps drawing tokens the grammar rejects then ends (invalid).
CONSTRAINT_MAX_SCANS = 128


def constrained_token(
    tokenizer: Any,
    stop_ids: set[int],
    viable: Callable[[str, bool], bool],
    so_far: list[int],
    logp: Any,
    token: int,
    request: ChatRequest,
    generator: Any,
    scans: int,
) -> tuple[int, int]:
    """``(token, scans)``. ``token`` if it keeps the reply ``viable`` (a stop token must end a complete
    reply); otherwise a draw, with the row's generator, among the ``CONSTRAINT_KEEP`` most likely viable
    tokens of the ``CONSTRAINT_SCAN`` most likely ones (renormalised; greedy: the most likely viable one),
    the scan stopping early once the tokens scanned carry ``CONSTRAINT_MASS`` of the probability. Without
    any viable token, or after ``CONSTRAINT_MAX_SCANS`` scans of the reply (``scans`` so far; returned
    counting this one), the reply ends here (a stop token): it cannot become valid, or it keeps fighting
    the grammar, and scanning at every token up to the reply budget stalled sampled GRPO steps for
    minutes. All of it is deterministic, so constrained decoding stays seeded."""
    import torch

    def ok(candidate: int) -> bool:
        stop = candidate in stop_ids
        text = tokenizer.decode(so_far + ([] if stop else [candidate]), skip_special_tokens=True)
        return viable(text, stop)

    if ok(token):
        return token, scans
    if scans >= CONSTRAINT_MAX_SCANS:
        return min(stop_ids), scans
    keep: list[int] = []
    mass = 0.0
    for c in torch.argsort(logp, descending=True)[:CONSTRAINT_SCAN].tolist():
        mass += float(torch.exp(logp[c]))
        if c != token and torch.isfinite(logp[c]) and ok(c):
            keep.append(c)
            if request.sampling.temperature == 0 or len(keep) >= CONSTRAINT_KEEP:
                break
        if keep and mass >= CONSTRAINT_MASS:
            break
    if not keep:
        return min(stop_ids), scans + 1
    if request.sampling.temperature == 0:
        return keep[0], scans + 1
    masked = torch.full_like(logp, float("-inf"))
    masked[keep] = logp[keep]
    return int(sample_token(torch.log_softmax(masked, dim=-1), request.sampling.top_p, generator)), scans + 1


def sample_token(logp: Any, top_p: float, generator: Any) -> Any:
    """One token from ``exp(logp)`` restricted to the top-p nucleus, drawn with the row's own generator."""
    import torch

    probs = logp.exp()
    if top_p < 1.0:
        sorted_p, order = probs.sort(descending=True)
        keep = (sorted_p.cumsum(0) - sorted_p) < top_p
        filtered = torch.zeros_like(probs)
        filtered[order[keep]] = sorted_p[keep]
        probs = filtered
    return torch.multinomial(probs, 1, generator=generator)[0]

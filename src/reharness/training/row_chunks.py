"""One forward pass per row: an accumulation chunk split into its rows, padding stripped.

TRL pads the rows of an accumulation chunk to one width (prompts on the left, completions on the right) and
runs them as a batch. With a padding mask, PyTorch's SDPA on the CPU falls back to the reference kernel that
materialises a ``heads × L × L`` attention matrix per row and keeps it for the backward pass. Policy rows are
whole episodes: an episode of a WebShop-like tiny agent is ~8,000 tokens, so a padded 2-row chunk of the
2-layer model took 5 GB and a 48-row chunk (3 tasks × K = 8 in 4 chunks) was killed for memory at 24 GB. The
same row alone has no padding, the mask is all ones, SDPA runs its fused causal kernel, and forward plus
backward of 8,000 tokens peaks at 0.75 GB.

The DAPO token-mean loss (our default) is a sum over rows divided by the generation batch's token count
(``num_items_in_batch``), so the gradient of a chunk is the sum of its rows' gradients: splitting is exact.
The other loss types average over the rows of a chunk and are left as TRL runs them. Rows with no trained
token (filler rows, masked turns) have zero gradient and are skipped.
"""

from __future__ import annotations

from typing import Any

#: Tensors aligned with the prompt (sliced to the row's unpadded prompt).
PROMPT_KEYS = frozenset({"prompt_ids", "prompt_mask"})
#: Tensors aligned with the completion (sliced to the row's unpadded completion).
COMPLETION_KEYS = frozenset(
    {
        "completion_ids",
        "completion_mask",
        "tool_mask",
        "old_per_token_logps",
        "ref_per_token_logps",
        "sampling_per_token_logps",
        "importance_sampling_ratio",
    }
)
#: One value per row.
ROW_KEYS = frozenset({"advantages"})
#: The same for every row (a scalar over the generation batch).
SHARED_KEYS = frozenset({"num_items_in_batch"})


def split_rows(chunk: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The chunk's rows with a trained token, each alone and unpadded; ``None`` when the chunk holds a key
    this function does not know how to slice (the caller then runs the chunk as it is)."""
    if set(chunk) - PROMPT_KEYS - COMPLETION_KEYS - ROW_KEYS - SHARED_KEYS:
        return None
    prompt_mask, completion_mask = chunk["prompt_mask"], chunk["completion_mask"]
    trained = completion_mask * chunk["tool_mask"] if "tool_mask" in chunk else completion_mask
    width = prompt_mask.size(1)
    rows = []
    for i in range(prompt_mask.size(0)):
        if not bool(trained[i].any()):
            continue
        start = width - int(prompt_mask[i].sum())  # prompts are left-padded
        end = int(completion_mask[i].sum())  # completions are right-padded
        row: dict[str, Any] = {}
        for key, value in chunk.items():
            if key in PROMPT_KEYS:
                row[key] = value[i : i + 1, start:]
            elif key in COMPLETION_KEYS:
                row[key] = value[i : i + 1, :end]
            elif key in ROW_KEYS:
                row[key] = value[i : i + 1]
            else:
                row[key] = value
        rows.append(row)
    return rows

"""An accumulation chunk run one unpadded row at a time: the slices, and the gradient equals the chunk's."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from reharness.models.tiny.config import ModelShape  # noqa: E402
from reharness.training.row_chunks import split_rows  # noqa: E402


def _chunk() -> dict:
    # row 0: prompt 3, completion 4 (trained 3 of them); row 1: prompt 5, completion 2; row 2: nothing trained
    pad = 0
    prompt_ids = torch.tensor([[pad, pad, 11, 12, 13], [21, 22, 23, 24, 25], [pad, pad, pad, pad, 31]])
    prompt_mask = (prompt_ids != pad).long()
    completion_ids = torch.tensor([[14, 15, 16, 17], [26, 27, pad, pad], [32, pad, pad, pad]])
    completion_mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]])
    tool_mask = torch.tensor([[1, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0]])
    return {
        "prompt_ids": prompt_ids,
        "prompt_mask": prompt_mask,
        "completion_ids": completion_ids,
        "completion_mask": completion_mask,
        "tool_mask": tool_mask,
        "advantages": torch.tensor([0.5, -1.0, 0.0]),
        "num_items_in_batch": torch.tensor(5),
    }


def test_rows_come_out_unpadded_and_untrained_rows_are_skipped() -> None:
    rows = split_rows(_chunk())
    assert rows is not None and len(rows) == 2
    first, second = rows
    assert first["prompt_ids"].tolist() == [[11, 12, 13]]
    assert first["completion_ids"].tolist() == [[14, 15, 16, 17]]
    assert first["tool_mask"].tolist() == [[1, 0, 1, 1]]
    assert first["advantages"].tolist() == [0.5]
    assert second["prompt_ids"].tolist() == [[21, 22, 23, 24, 25]]
    assert second["completion_ids"].tolist() == [[26, 27]]
    assert second["completion_mask"].tolist() == [[1, 1]]
    assert int(second["num_items_in_batch"]) == 5  # shared over the generation batch, not per row
    assert all(int(r["prompt_mask"].sum()) == r["prompt_mask"].numel() for r in rows)


def test_a_key_it_cannot_slice_leaves_the_chunk_whole() -> None:
    chunk = _chunk() | {"pixel_values": torch.zeros(3, 4)}
    assert split_rows(chunk) is None


def _token_mean_loss(model, chunk) -> torch.Tensor:
    """The DAPO surrogate at ratio 1: −Σ A·log π(token) over trained tokens / the batch's token count."""
    ids = torch.cat([chunk["prompt_ids"], chunk["completion_ids"]], dim=1)
    mask = torch.cat([chunk["prompt_mask"], chunk["completion_mask"]], dim=1)
    width = chunk["completion_ids"].size(1)
    logits = model(input_ids=ids, attention_mask=mask).logits[:, -width - 1 : -1, :]
    logps = torch.log_softmax(logits, dim=-1).gather(-1, chunk["completion_ids"][..., None]).squeeze(-1)
    trained = chunk["completion_mask"] * chunk["tool_mask"]
    return -(chunk["advantages"][:, None] * logps * trained).sum() / chunk["num_items_in_batch"]


def test_the_rows_gradient_sums_to_the_padded_chunks() -> None:
    torch.manual_seed(0)
    shape = ModelShape(hidden_size=32, num_layers=2, intermediate_size=64, vocab_size=64)
    kwargs = shape.llama_config_kwargs(64) | {"pad_token_id": 0, "attn_implementation": "sdpa"}
    config = transformers.LlamaConfig(**kwargs)
    model = transformers.LlamaForCausalLM(config).float()
    chunk = _chunk()

    _token_mean_loss(model, chunk).backward()
    whole = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    for row in split_rows(chunk) or []:
        _token_mean_loss(model, row).backward()
    split = [p.grad.clone() for p in model.parameters()]
    assert any(g.abs().sum() > 0 for g in whole)
    for a, b in zip(whole, split, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)

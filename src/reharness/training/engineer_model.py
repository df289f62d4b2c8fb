"""The engineer as a causal LM: prompts of training rows, the built-in tiny engineer, model directories.

**Prompts.** :func:`row_prompt` gives the chat messages of a packet row in the engineer's prompt style:
``full`` uses the ``system``/``user`` text stored with the row (Harness-R1's prompt, exactly as
:mod:`reharness.engineer.prompts` built it); ``compact`` re-renders the packet within a character budget
(:mod:`reharness.engineer.compact`) so a tiny engineer's context holds prompt and reply.

**Tiny engineer.** :func:`build_tiny_engineer` trains the tiny agents' BPE tokenizer (letter runs, single
digits, single punctuation marks; ChatML-like template with ``<|im_end|>`` as EOS,
:mod:`reharness.training.tiny.tokenizer`) on the prompts and replies, and initialises a small Llama-style
model (:class:`~reharness.models.tiny.config.ModelShape`) from scratch — no download. Any Hugging Face model
with a chat template can be the engineer instead (``--base PATH``).

**Model directories.** :func:`save_engineer` writes a standard HF model directory (``save_pretrained``
model and tokenizer, a greedy generation config with the reply budget) plus
:data:`reharness.engineer.compact.ENGINEER_FILE`, which records the prompt style, the training stage and its
provenance — so ``reharness improve --engineer hf:PATH`` prompts the engineer as it was trained.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from reharness.core.errors import ConfigError
from reharness.engineer.compact import ENGINEER_FILE, ENGINEER_SCHEMA, PromptStyle, build_prompt
from reharness.models.tiny.config import ModelShape

#: The built-in tiny engineer (~0.2M parameters): 4k context holds a compact prompt and a long reply.
TINY_ENGINEER = ModelShape(
    hidden_size=64,
    num_layers=2,
    num_heads=4,
    num_kv_heads=4,
    intermediate_size=192,
    vocab_size=1024,
    max_position_embeddings=4096,
)
#: A minute-long configuration for tests (~0.1M parameters). Two layers: with one layer of width 32 the
#: engineer never learned to write even one short repair program in 40 steps (it repeated tokens).
MICRO_ENGINEER = ModelShape(
    hidden_size=64,
    num_layers=2,
    num_heads=4,
    num_kv_heads=4,
    intermediate_size=128,
    vocab_size=400,
    max_position_embeddings=4096,
)
SHAPES = {"S": TINY_ENGINEER, "micro": MICRO_ENGINEER}


def row_prompt(row: dict[str, Any], style: PromptStyle) -> list[dict[str, str]]:
    """The chat messages (``role``/``content`` dicts) of a packet row in ``style``."""
    if style.kind == "full":
        return [{"role": "system", "content": row["system"]}, {"role": "user", "content": row["user"]}]
    from reharness.failures.packets import FailurePacket

    packet = FailurePacket.model_validate_json(row["packet"])
    return [{"role": m.role, "content": m.content} for m in build_prompt(packet, style)]


def corpus(examples: Iterable[dict[str, Any]]) -> Iterator[str]:
    """Texts to train the tiny engineer's tokenizer on: every prompt message and reply of the SFT examples."""
    for example in examples:
        for message in list(example["prompt"]) + list(example["completion"]):
            yield message["role"] + "\n" + message["content"]


def build_tiny_engineer(
    texts: Iterable[str], shape: ModelShape, seed: int, words: Iterable[str] = ()
) -> tuple[Any, Any]:
    """A tokenizer trained on ``texts`` (plus ``words`` kept whole, one token each: the repair-program
    vocabulary, :func:`reharness.engineer.program.vocabulary`) and a fresh Llama-style model of ``shape``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from reharness.training.tiny.tokenizer import train_tokenizer

    tokenizer = train_tokenizer(texts, shape.vocab_size)
    tokenizer.add_tokens(list(words))
    torch.manual_seed(seed)
    config = LlamaConfig(
        **shape.llama_config_kwargs(len(tokenizer)),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return tokenizer, LlamaForCausalLM(config)


def load_engineer(path: str | Path, dtype: str | None = None) -> tuple[Any, Any, dict[str, Any]]:
    """``(tokenizer, model, engineer info)`` of a model directory; info is ``{}`` for a plain HF model.

    The model is loaded on the CPU (float32 unless ``dtype``); the trainer moves it to its device."""
    from reharness.models.hf_backend import load_model_dir

    root = Path(path).expanduser()
    tokenizer, model = load_model_dir(root, "cpu", dtype)
    model.train()
    file = root / ENGINEER_FILE
    info = json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, model, info


def check_model_dir(path: str | Path, what: str, fix: str) -> Path:
    """``path`` as a directory that holds a model, or a :class:`ConfigError` that says how to get one."""
    root = Path(path).expanduser()
    if not (root / "config.json").is_file():
        raise ConfigError(f"{what} {str(root)!r} is not a model directory (no config.json)", hint=fix)
    return root


def save_engineer(
    model: Any, tokenizer: Any, out: str | Path, style: PromptStyle, info: dict[str, Any]
) -> Path:
    """Save a trained engineer as an HF model directory with :data:`ENGINEER_FILE` (see module docs)."""
    from transformers import GenerationConfig

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.generation_config = GenerationConfig(
        do_sample=False,
        max_new_tokens=style.max_new_tokens or 1024,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model.eval().save_pretrained(out)
    tokenizer.save_pretrained(out)
    data = {"schema": ENGINEER_SCHEMA, "prompt_style": style.model_dump(mode="json")} | info
    (out / ENGINEER_FILE).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out


def update_engineer_info(out: str | Path, info: dict[str, Any]) -> None:
    """Merge ``info`` into the :data:`ENGINEER_FILE` of a saved engineer (the weights stay as saved)."""
    file = Path(out) / ENGINEER_FILE
    data = json.loads(file.read_text(encoding="utf-8")) | info
    file.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def count_params(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))

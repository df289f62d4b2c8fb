"""Test helper: a real, tiny Hugging Face chat model built in about a second, with no download.

:func:`build_tiny_model` trains a byte-level BPE tokenizer with ``tokenizers`` on a small corpus, gives it a
ChatML chat template (``<|im_end|>`` ends a turn), builds a random-initialised Llama-style model from a
config and saves both to a directory that ``AutoModelForCausalLM.from_pretrained`` and
``AutoTokenizer.from_pretrained`` load like any model directory. The weights are random, so replies are
noise — but every code path (chat template, tokenisation, batching, sampling, stop tokens, logprobs) is
the real one.

Random replies rarely produce the end-of-turn token, so tests bound them with ``max_tokens``.
"""

from __future__ import annotations

from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a countertop 2, "
    "a drawer 3, a fridge 1, a microwave 1, a sinkbasin 1 and a toaster 1.",
    "Your task is to: put a clean mug in the coffeemachine.",
    "Think: I need to find a mug first.\nAction: go to countertop 2",
    "Action: take mug 1 from countertop 2",
    "Action: clean mug 1 with sinkbasin 1",
    "Observation: Nothing happens.",
    "Admissible actions: look, inventory, go to cabinet 1, open drawer 3, examine toaster 1",
    'search[red running shoes] click[Buy Now] <tool_call>{"name": "act", "arguments": {"action": "look"}}'
    "</tool_call>",
    "SELECT name, price FROM products WHERE price < 10 ORDER BY price; Final Answer: 42",
    "0 1 2 3 4 5 6 7 8 9 10 11 12 the a an of to in on with from and or is are was you I it",
]


def build_tokenizer(out_dir: str | Path, vocab_size: int = 400) -> object:
    """Train and save a byte-level BPE tokenizer with a ChatML template; returns the HF tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|pad|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    hf = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<|pad|>",
        eos_token="<|im_end|>",
        bos_token="<|im_start|>",
        chat_template=CHAT_TEMPLATE,
    )
    hf.save_pretrained(str(out_dir))
    return hf


def build_tiny_model(
    out_dir: str | Path,
    *,
    seed: int = 0,
    hidden_size: int = 64,
    layers: int = 2,
    kv_heads: int = 4,
    head_scale: float = 40.0,
    max_positions: int = 4096,
) -> Path:
    """Build and save a tiny random Llama chat model under ``out_dir``; returns the directory.

    ``kv_heads`` < 4 gives grouped-query attention (as in Llama 3 / Qwen 2).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out)
    vocab = len(tokenizer)  # type: ignore[arg-type]
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in ("<|pad|>", "<|im_start|>", "<|im_end|>")}  # type: ignore[attr-defined]
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=kv_heads,  # 4 = plain multi-head attention, like the built-in tiny agents
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
        pad_token_id=ids["<|pad|>"],
        bos_token_id=ids["<|im_start|>"],
        eos_token_id=ids["<|im_end|>"],
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        # random init gives near-uniform logits; a larger head gives peaked, model-like distributions
        model.lm_head.weight.mul_(head_scale)
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|pad|>"]
    model.save_pretrained(str(out))
    return out

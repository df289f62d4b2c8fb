"""The tiny agents' tokenizer, chat template and supervision masks.

Why not plain byte-level BPE: in a measured spike, GPT-2-style byte-level BPE merged entity names and
instance numbers unpredictably and the model confused ``cabinet 1`` with ``cabinet 12``. Here a regex
pre-tokenizer cuts text into letter runs (with their leading space), *single digits* and single punctuation
marks before a byte-level BPE is trained on the demonstrations; so frequent words and entity names become one
token each, every number is spelt digit by digit (cheap and exactly copyable), and any unseen byte encodes.

The chat template is ChatML-like (``<|im_start|>role\\n…<|im_end|>\\n``); ``<|im_end|>`` is the EOS token,
so a reply ends where a chat backend stops. :func:`encode_demo` tokenises a whole episode and marks the
supervised tokens (content + ``<|im_end|>`` of every supervised assistant turn); it checks that its
per-message tokenisation equals that of the rendered chat, so training sees exactly what inference sees.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from transformers import PreTrainedTokenizerFast

    from reharness.training.tiny.demos import Demo

PAD, IM_START, IM_END = "<|pad|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (PAD, IM_START, IM_END)
#: letter runs (with leading space), single digits, single other characters, whitespace runs
PRETOKENIZE_PATTERN = r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]|\s+(?!\S)|\s+"
#: the same with every space its own token: a word is one token whatever precedes it (``search[yoga`` and ``…
#: yoga`` share ``yoga``), so copying a word out of an observation into ``search[…]``, ``click[…]`` or SQL is
#: an exact token copy. Measured: with the default pattern a WebShop-like agent never learned to copy a query
#: word (``search[ssss…``), because the instruction's `` yoga`` and the action's ``yoga`` are different
#: tokens.
SPLIT_SPACES_PATTERN = r"[A-Za-z]+|[0-9]|[^\sA-Za-z0-9]|\s+"

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + (message['content'] or '') + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def render_message(role: str, content: str) -> str:
    """One message exactly as :data:`CHAT_TEMPLATE` renders it."""
    return f"{IM_START}{role}\n{content}{IM_END}\n"


def train_tokenizer(
    texts: Iterable[str], vocab_size: int, split_spaces: bool = False
) -> PreTrainedTokenizerFast:
    """Train the BPE tokenizer on ``texts`` and wrap it as a transformers fast tokenizer.

    ``split_spaces``: pre-tokenise with :data:`SPLIT_SPACES_PATTERN` (spaces are separate tokens).
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(
                Regex(SPLIT_SPACES_PATTERN if split_spaces else PRETOKENIZE_PATTERN), behavior="isolated"
            ),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=2,
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        eos_token=IM_END,
        bos_token=None,
        unk_token=None,
        additional_special_tokens=[IM_START],
        clean_up_tokenization_spaces=False,
        model_max_length=1_000_000,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def demo_texts(demos: Sequence[Demo]) -> Iterator[str]:
    """The text of every message (tokenizer training corpus; the template's markers are special tokens)."""
    for demo in demos:
        for message in demo.messages:
            yield message.role + "\n" + message.content


def encode_demo(
    tokenizer: PreTrainedTokenizerFast, demo: Demo, check: bool = True, context_loss: bool = False
) -> tuple[list[int], list[int]]:
    """Token ids of the whole episode and the supervision mask (1 = loss on this token).

    ``context_loss``: also put loss on every non-assistant token (system, observations), i.e. a domain
    language-modelling objective; perturbed assistant turns stay unsupervised either way.
    """
    ids: list[int] = []
    mask: list[int] = []
    start_id = int(tokenizer.convert_tokens_to_ids(IM_START))  # type: ignore[arg-type]
    end_id = int(tokenizer.convert_tokens_to_ids(IM_END))  # type: ignore[arg-type]
    newline = tokenizer("\n", add_special_tokens=False)["input_ids"]
    turns = iter(demo.supervised)
    for message in demo.messages:
        header = tokenizer(message.role + "\n", add_special_tokens=False)["input_ids"]
        body = tokenizer(message.content, add_special_tokens=False)["input_ids"] if message.content else []
        assistant = message.role == "assistant"
        supervised = next(turns) if assistant else context_loss
        frame = int(context_loss and (not assistant or supervised))
        ids += [start_id, *header, *body, end_id, *newline]
        mask += [frame] * (1 + len(header)) + [int(supervised)] * (len(body) + 1) + [frame] * len(newline)
    if check:
        rendered = tokenizer.apply_chat_template(demo.as_dicts(), tokenize=False)
        assert isinstance(rendered, str)
        full = tokenizer(rendered, add_special_tokens=False)["input_ids"]
        if full != ids:
            raise ValueError(f"{demo.task_id}: per-message tokenisation differs from the rendered chat")
    return ids, mask

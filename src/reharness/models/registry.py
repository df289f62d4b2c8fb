"""Backend specs → model backends: :func:`make_backend` (``openai:MODEL@BASE_URL``, ``hf:PATH``,
``tiny:NAME``, ``pretrained:NAME[@ENGINE]``) and the checks that run before anything loads
(:func:`check_spec`).

Scripted agents and whole agent specs (``solver``, ``random``, ``gold`` or a backend spec) are resolved one
layer up, by :func:`reharness.runtime.agent_specs.make_agent`. Heavy libraries load only when a backend of
that kind is built (``httpx`` for ``openai``, ``torch``/``transformers`` for ``hf`` and ``tiny``), so
importing this module is cheap.

Tiny agents (``tiny:ENV-SIZE``) are looked up, in order, in the package
(``reharness/models/tiny/weights/NAME``) and in the cache (``$REHARNESS_CACHE/tiny/NAME``, default
``~/.cache/reharness/tiny/NAME``); a missing built-in one is trained into the cache on first use after a
clear message (by the trainer the training layer declares, :mod:`reharness.models.tiny.registry`), or
(``train_missing=False``, ``reharness run --no-train``) fails with its training command.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reharness.core.agent import Agent
from reharness.core.errors import ConfigError, UnknownNameError
from reharness.core.registry import Registry

#: ``ENV-SIZE``; the environment's name may hold dashes itself (an installed kit's), the size follows the last
_TINY_NAME = re.compile(r"^(?P<env>[a-z][a-z0-9_-]*)-(?P<size>[A-Za-z0-9]+)$")
Notify = Callable[[str], None] | None


@dataclass(frozen=True)
class BackendSpec:
    """A parsed backend spec."""

    kind: str
    target: str  # model name (openai), directory (hf) or tiny agent name
    base_url: str | None = None
    written: str = field(default="", compare=False)  # the spec as written (a tiny agent's policy id)


@dataclass(frozen=True)
class BackendKind:
    """One kind of model backend: how its spec is written (``form``), checked before anything loads
    (``check``) and built (``build``: the spec, ``train_missing``, ``notify``, the backend's options)."""

    form: str
    check: Callable[[BackendSpec], None]
    build: Callable[[BackendSpec, bool, Notify, dict[str, Any]], Agent]
    parse: Callable[[str, str], BackendSpec] | None = None  # (whole spec, what follows the colon)
    #: Checks that ``--device`` can place this spec's model (raises a ConfigError); None: it cannot be placed.
    place: Callable[[BackendSpec, str], None] | None = None


#: The model backends by prefix (``openai``, ``hf``, ``tiny``, ``pretrained``).
BACKENDS: Registry[BackendKind] = Registry("model backend")


def _parse_openai(spec: str, rest: str) -> BackendSpec:
    form = BACKENDS.get("openai").form
    model, at, url = rest.partition("@")
    model, url = model.strip(), url.strip()
    if not model or (at and not url):
        raise ConfigError(f"malformed backend spec {spec!r}", hint=f"write it as {form}")
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"base URL {url!r} in {spec!r} must start with http:// or https://", hint=f"write it as {form}"
        )
    return BackendSpec("openai", model, url or None)


def _build_openai(parsed: BackendSpec, train_missing: bool, notify: Notify, options: dict[str, Any]) -> Agent:
    from reharness.models.openai_backend import OpenAIBackend

    return OpenAIBackend(parsed.target, parsed.base_url, **options)


def _check_hf(parsed: BackendSpec) -> None:
    if parsed.target.endswith(".gguf"):
        from reharness.models.pretrained import check_gguf_file

        check_gguf_file(Path(parsed.target))
    elif not Path(parsed.target).expanduser().is_dir():
        raise ConfigError(
            f"model directory {str(Path(parsed.target).expanduser())!r} does not exist",
            hint=f"write it as {BACKENDS.get('hf').form}; hub names are not downloaded",
        )


def _build_hf(parsed: BackendSpec, train_missing: bool, notify: Notify, options: dict[str, Any]) -> Agent:
    gguf = _gguf_of(parsed.target, options)
    if gguf is not None:
        from reharness.models.pretrained import make_gguf_hf

        return make_gguf_hf(gguf, **options)
    from reharness.models.hf_backend import HFBackend

    return HFBackend(Path(parsed.target).expanduser(), **options)


def _check_tiny(parsed: BackendSpec) -> None:
    if not _TINY_NAME.match(parsed.target):
        raise ConfigError(
            f"tiny agent name {parsed.target!r} is malformed",
            hint="tiny agents are named ENV-SIZE, e.g. tiny:ENV-S or tiny:ENV-M (`reharness agent list`)",
        )


def _build_tiny(parsed: BackendSpec, train_missing: bool, notify: Notify, options: dict[str, Any]) -> Agent:
    from reharness.models.hf_backend import HFBackend

    path = resolve_tiny(parsed.target, train=train_missing, notify=notify)
    return HFBackend(
        path, policy_id=options.pop("policy_id", parsed.written or f"tiny:{parsed.target}"), **options
    )


def _check_pretrained(parsed: BackendSpec) -> None:
    from reharness.models.pretrained import parse_pretrained

    parse_pretrained(parsed.target)


def _place_anywhere(parsed: BackendSpec, device: str) -> None:
    """transformers models go to any device torch has."""


def _place_pretrained(parsed: BackendSpec, device: str) -> None:
    from reharness.models.pretrained import check_device

    check_device(parsed.target, device)


def _build_pretrained(
    parsed: BackendSpec, train_missing: bool, notify: Notify, options: dict[str, Any]
) -> Agent:
    from reharness.models.pretrained import make_pretrained

    return make_pretrained(parsed.target, **options)


BACKENDS.add(
    "openai",
    BackendKind(
        "openai:MODEL@BASE_URL (e.g. openai:gpt-4o@https://api.openai.com/v1; without @BASE_URL, "
        "$OPENAI_BASE_URL or the OpenAI API is used)",
        lambda parsed: None,
        _build_openai,
        _parse_openai,
    ),
    metavar="openai:MODEL@BASE_URL",
)
BACKENDS.add(
    "hf",
    BackendKind(
        "hf:PATH (a local Hugging Face model directory with a chat template, or a GGUF file)",
        _check_hf,
        _build_hf,
        place=_place_anywhere,
    ),
    metavar="hf:PATH",
)
BACKENDS.add(
    "tiny",
    BackendKind(
        "tiny:ENV-SIZE (a built-in tiny agent; `reharness agent list` shows them)",
        _check_tiny,
        _build_tiny,
        place=_place_anywhere,
    ),
    metavar="tiny:NAME",
)
BACKENDS.add(
    "pretrained",
    BackendKind(
        "pretrained:NAME[@ENGINE] (a pretrained model from an installed wheel, e.g. "
        "pretrained:smollm2-135m; ENGINE hf, hf-bf16, hf-int8 or llamacpp)",
        _check_pretrained,
        _build_pretrained,
        place=_place_pretrained,
    ),
    metavar="pretrained:NAME",
)


def is_backend_spec(spec: str) -> bool:
    """Whether ``spec`` names a model backend (as opposed to a scripted agent)."""
    return ":" in spec and spec.partition(":")[0] in BACKENDS


def parse_spec(spec: str) -> BackendSpec:
    """Parse a backend spec; errors say how to write it (an unknown prefix lists the close ones)."""
    prefix, colon, rest = spec.partition(":")
    if not colon:
        raise UnknownNameError(
            f"{spec!r} is not a model backend spec",
            hint="write PREFIX:TARGET — " + "; ".join(kind.form for kind in BACKENDS.entries()),
        )
    if prefix not in BACKENDS:
        error = BACKENDS.unknown(prefix)
        raise UnknownNameError(f"{error.message} in {spec!r}", hint=error.hint)
    kind = BACKENDS.get(prefix)
    rest = rest.strip()
    if kind.parse is not None:
        return replace(kind.parse(spec, rest), written=spec)
    if not rest:
        raise ConfigError(f"malformed backend spec {spec!r}", hint=f"write it as {kind.form}")
    return BackendSpec(prefix, rest, written=spec)


def check_spec(spec: str) -> BackendSpec:
    """Parse ``spec`` and check what can be checked without loading anything (a tiny agent's name form, an
    hf directory's existence), so that a bad spec fails before any work rather than after a baseline."""
    parsed = parse_spec(spec)
    BACKENDS.get(parsed.kind).check(parsed)
    return parsed


def resolve_tiny(name: str, train: bool = False, notify: Callable[[str], None] | None = None) -> Path:
    """The model directory of tiny agent ``name``: :func:`reharness.models.tiny.registry.resolve_tiny` after
    checking the name's form (built-in agents are trained on first use only when ``train`` is true)."""
    if not _TINY_NAME.match(name):
        raise ConfigError(
            f"tiny agent name {name!r} is malformed",
            hint="tiny agents are named ENV-SIZE, e.g. tiny:ENV-S or tiny:ENV-M (`reharness agent list`)",
        )
    from reharness.models.tiny.registry import resolve_tiny as resolve

    return resolve(name, train=train, notify=notify)


_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")


def backend_options(spec: str, *, device: str | None = None, gguf_file: str | None = None) -> dict[str, str]:
    """The options ``--device`` and ``--gguf-file`` give ``spec``'s backend, checked before anything loads:
    ``gguf_file`` picks the file of an ``hf:DIR`` holding several GGUF files; ``device`` (``cpu``, ``cuda``,
    ``cuda:N``, ``mps``) places an in-process model (``hf:``, ``tiny:``, ``pretrained:`` with a transformers
    engine). Whether a CUDA device exists is checked when the model loads."""
    options: dict[str, str] = {}
    parsed = check_spec(spec) if is_backend_spec(spec) else None
    if gguf_file is not None:
        if parsed is None or parsed.kind != "hf" or parsed.target.endswith(".gguf"):
            raise ConfigError(
                f"--gguf-file {gguf_file} picks a file inside an hf:DIR, and the agent is {spec!r}",
                hint="pass --agent hf:DIR --gguf-file NAME.gguf, or --agent hf:DIR/NAME.gguf",
            )
        from reharness.models.pretrained import check_gguf_file

        check_gguf_file(Path(parsed.target).expanduser() / gguf_file)
        options["gguf_file"] = gguf_file
    if device is not None:
        if not _DEVICE.match(device):
            raise ConfigError(f"--device {device!r} is not a device", hint="pass cpu, cuda, cuda:N or mps")
        place = BACKENDS.get(parsed.kind).place if parsed is not None else None
        if parsed is None or place is None:
            raise ConfigError(
                f"--device places an in-process model, and the agent {spec!r} is not one",
                hint="use --device with hf:, tiny: or pretrained: agents; an openai: server places its own",
            )
        place(parsed, device)
        if device != "cpu":
            options["device"] = device
    return options


def make_backend(spec: str, train_missing: bool = True, notify: Notify = None, **options: Any) -> Agent:
    """Build the agent for a backend spec; ``options`` go to the backend's constructor.

    ``train_missing``: a built-in tiny agent that is not shipped or cached is trained on first use (up to
    ~30 CPU minutes, announced through ``notify``, default stderr); when false, the error names the command.
    """
    parsed = check_spec(spec)
    return BACKENDS.get(parsed.kind).build(parsed, train_missing, notify, options)


def _gguf_of(target: str, options: dict[str, Any]) -> Path | None:
    """The GGUF file an ``hf:`` spec names: ``hf:FILE.gguf``, ``hf:DIR`` with option ``gguf_file``, or a
    directory with one GGUF file and no config.json (:mod:`reharness.models.pretrained`)."""
    from reharness.models.pretrained import gguf_in_dir

    path = Path(target).expanduser()
    if target.endswith(".gguf"):
        return path
    if options.get("gguf_file"):
        return path / str(options.pop("gguf_file"))
    return gguf_in_dir(path)

"""``LLMEngineer``: a prompted harness engineer on any model backend (``llm:BACKEND_SPEC``).

For a packet it builds the prompt once (:func:`reharness.engineer.prompts.build_messages`), then asks the
backend ``n`` times — concurrently, each request with its own 31-bit seed derived from ``(seed, index)`` and
the configured temperature / top-p (Harness-R1 samples at 0.7 / 0.95) — and turns every reply into a
:class:`~reharness.engineer.base.Proposal`: parsed with the Harness-R1 reply parser, checked against the
packet's environment and statically validated with the packet's leakage evidence. Failures are proposals
with a stable ``error_code``: ``backend_error`` (the model call failed), the reply parser's format codes
(``no_patch_tag``, ``unterminated_patch_tag``, ``unterminated_think``, ``invalid_json``, ``wrong_schema``,
...), ``wrong_env``, or the static rule that failed (``forbidden_import``, ``leakage``, ...).

The backend is built lazily from the spec (``openai:MODEL@URL``, ``tiny:NAME``, ``hf:PATH``) on first use,
so constructing the engineer costs nothing; an already built :class:`~reharness.runtime.Agent` can be
passed instead. The prompt is Harness-R1's full prompt unless ``prompt_style`` says otherwise; an ``hf:PATH``
engineer trained by ``reharness train engineer`` records its style (and reply budget) in its model directory
(:mod:`reharness.engineer.compact`), which is used when no style is passed.

``resample_invalid`` (default: 8 for an engineer that replies in repair programs, 0 otherwise) samples a
reply again, with a fresh seed, while it fails the host's static checks (parse, compile, validation) — a
rejection sampler for the program grammar that costs a few dozen tokens per try and never looks at a
rerun, so the measured Δ of the kept proposal is untouched. A proposal records its ``attempts`` and the
error codes of the rejected tries (``rejected``); greedy decoding never resamples (it would repeat itself).
``constrain`` (default: on for repair programs) also sends the program grammar with each request
(:func:`~reharness.engineer.program_prefix.program_constraint`): an in-process model (``hf:``, ``tiny:``)
then draws only tokens that keep the reply a viable program, greedy decoding included; remote backends
ignore it and rely on the resampling.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reharness.core.errors import ConfigError
from reharness.core.hashing import derive_seed
from reharness.core.types import ChatRequest, ChatResponse, SamplingParams
from reharness.engineer.base import BACKEND_ERROR, Engineer, Proposal, finish_reply
from reharness.engineer.compact import PromptStyle, build_prompt, style_of_model_dir
from reharness.engineer.program_prefix import program_constraint

if TYPE_CHECKING:
    from reharness.failures.packets import FailurePacket
    from reharness.runtime.agents import Agent


#: Resamples of a repair-program reply that fails the static checks (see the module docstring).
PROGRAM_RESAMPLES = 8


class ModelEngineerOptions(BaseModel):
    """How a model engineer (``llm:…``, ``hf:…``) is prompted and decodes, as chosen on the command line
    (``improve --engineer-…``, ``experiment r1 --editor-…``); unset fields keep the engineer's defaults.

    ``prompt``: Harness-R1's full prompt or the compact one (the only one a small context fits; a repair
    program needs it); ``language``: free hook code or a repair program; ``constrain``: decode a program
    under its grammar (in-process models); ``max_tokens``: the reply budget."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: Literal["full", "compact"] | None = None
    language: Literal["hooks", "program"] | None = None
    constrain: bool | None = None
    max_tokens: int | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> ModelEngineerOptions:
        hint = "see `reharness improve --help`"
        if self.language == "program" and self.prompt == "full":
            raise ConfigError(
                "--engineer-language program is asked for by the compact prompt, not --engineer-prompt full",
                hint=hint,
            )
        if self.constrain and self.language != "program":
            raise ConfigError(
                "--engineer-constrain needs --engineer-language program (the grammar is the programs')",
                hint=hint,
            )
        return self

    @property
    def given(self) -> bool:
        return any(v is not None for v in self.model_dump().values())

    def engineer_kwargs(self) -> dict[str, Any]:
        """:class:`LLMEngineer` keyword arguments for the fields that are set."""
        kwargs: dict[str, Any] = {}
        if self.prompt is not None or self.language is not None:
            language = self.language or "hooks"
            kind = self.prompt or ("compact" if language == "program" else "full")
            kwargs["prompt_style"] = PromptStyle(kind=kind, language=language)
        if self.constrain is not None:
            kwargs["constrain"] = self.constrain
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        return kwargs


class LLMEngineer(Engineer):
    """The ``llm:BACKEND`` engineer (see the module docstring)."""

    def __init__(
        self,
        backend_spec: str,
        *,
        temperature: float = 0.7,
        top_p: float = 0.95,
        max_tokens: int | None = None,
        concurrency: int = 8,
        backend: Agent | None = None,
        prompt_style: PromptStyle | None = None,
        resample_invalid: int | None = None,
        constrain: bool | None = None,
        **backend_options: Any,
    ) -> None:
        self.spec = backend_spec
        self.name = f"llm:{backend_spec}"
        if prompt_style is None and backend_spec.startswith("hf:"):
            prompt_style = style_of_model_dir(backend_spec[3:].strip())
        self.prompt_style = prompt_style or PromptStyle()
        if max_tokens is None:
            max_tokens = self.prompt_style.max_new_tokens or 4096
        self.sampling = SamplingParams(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
        program = self.prompt_style.language == "program"
        if resample_invalid is None:
            resample_invalid = PROGRAM_RESAMPLES if program else 0
        if resample_invalid < 0:
            raise ConfigError(f"resample_invalid must be at least 0, got {resample_invalid}")
        self.resample_invalid = resample_invalid if temperature > 0 else 0
        self.constrain = program if constrain is None else constrain and program
        self.concurrency = max(1, concurrency)
        self.backend_options = backend_options
        self._backend = backend
        self._owned = backend is None

    def backend(self) -> Agent:
        """The model backend (built from the spec on first use)."""
        if self._backend is None:
            from reharness.models.registry import make_backend

            self._backend = make_backend(self.spec, **self.backend_options)
        return self._backend

    def requests(self, packet: FailurePacket, n: int, seed: int = 0) -> list[ChatRequest]:
        """The ``n`` chat requests of :meth:`propose` (same prompt, seeds derived from ``seed`` and index)."""
        messages = build_prompt(packet, self.prompt_style)
        constraint = program_constraint(packet.header.benchmark) if self.constrain else None
        return [
            ChatRequest(
                messages=messages,
                sampling=self.sampling,
                seed=derive_seed("llm-engineer", seed, i) & 0x7FFF_FFFF,  # 31 bits survive every server
                metadata={"engineer": self.name, "index": i},
                constraint=constraint,
            )
            for i in range(n)
        ]

    async def propose(self, packet: FailurePacket, n: int, seed: int = 0) -> list[Proposal]:
        backend = self.backend()
        limit = asyncio.Semaphore(self.concurrency)

        async def one(i: int, request: ChatRequest) -> Proposal:
            meta: dict[str, Any] = {
                "engineer": self.name,
                "index": i,
                "seed": seed,
                "request_seed": request.seed,
                "temperature": self.sampling.temperature,
                "top_p": self.sampling.top_p,
            }
            rejected: list[str] = []
            for attempt in range(1 + self.resample_invalid):
                if attempt:
                    seed_a = derive_seed("llm-engineer", seed, i, attempt) & 0x7FFF_FFFF
                    request = request.model_copy(update={"seed": seed_a})
                async with limit:
                    try:
                        response = await backend.complete(request)
                    except Exception as exc:  # a backend that raises costs only this proposal
                        response = ChatResponse(error=f"{type(exc).__name__}: {exc}"[:1000])
                if response.completion_token_ids is not None:
                    meta["completion_tokens"] = meta.get("completion_tokens", 0) + len(
                        response.completion_token_ids
                    )
                meta |= {"attempts": attempt + 1, "rejected": list(rejected)}
                if response.error:  # an infrastructure failure, not a bad reply: never resampled
                    return Proposal(
                        None, response.text, f"model call failed: {response.error}", BACKEND_ERROR, meta
                    )
                proposal = finish_reply(response.text, packet, meta)
                if proposal.valid:
                    return proposal
                rejected.append(proposal.error_code or "invalid")
            return proposal

        return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(self.requests(packet, n, seed)))))

    async def close(self) -> None:
        if self._backend is not None and self._owned:
            await self._backend.close()
            self._backend = None

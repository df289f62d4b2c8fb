"""OpenAI-compatible chat backend (``openai:MODEL@BASE_URL``): vLLM, SGLang, llama.cpp, Ollama, hosted APIs.

One pooled ``httpx.AsyncClient`` per backend (keep-alive, bounded connections, connect/read timeouts).
Transient faults — HTTP 408/409/429/5xx, connection errors, timeouts, a reply that is not JSON, a reply with
an empty or missing ``choices`` list (an overloaded or misbehaving server, like a 5xx) — are retried with
exponential backoff and full jitter, honouring ``Retry-After`` (seconds or an HTTP date) up to
``max_retry_after_s``; after ``max_retries`` retries, or on a non-transient fault (400, 401, 404), the request
ends in ``ChatResponse(error=...)`` that names the fault and how to fix it. Nothing raises out of
:meth:`OpenAIBackend.complete`, so a fault becomes data in the episode, never a crashed run. Every reply
carries its retry trace (``attempts``, ``retry_waits_s``, ``retry_errors``), which the episode stores in the
step record. The API key is registered with :func:`reharness.core.secrets.register_secret` and every
message built from a server's reply is redacted, so a server that echoes the key cannot leak it.

Per request it sends ``seed`` and the sampling parameters, ``tools`` when the harness offers any (replies'
``tool_calls`` are parsed; malformed ``arguments`` are kept as data, see :mod:`reharness.models.base`), and
``logprobs: true`` — dropped for the rest of the session if the server rejects it with a 400 that mentions
logprobs. Token ids are read when the server returns them (vLLM's ``prompt_token_ids`` / choice ``token_ids``
with ``return_token_ids``, or ``token_id:N`` logprob tokens with ``return_tokens_as_token_ids``; pass either
through ``extra_body``). ``usage.prompt_tokens`` (which vLLM always sends) gives the prompt's length in
tokens when the ids are not returned.

The retry budget can be set without code, for ``reharness run --agent openai:…``: the environment variables
``REHARNESS_OPENAI_MAX_RETRIES`` and ``REHARNESS_OPENAI_BACKOFF_S`` (the base of the exponential backoff)
give the defaults of ``max_retries`` and ``backoff_base_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import random
import time
from typing import Any

import httpx

from reharness.core.agent import Agent
from reharness.core.errors import ConfigError
from reharness.core.secrets import redact, register_secret
from reharness.core.types import ChatRequest, ChatResponse, ToolCall
from reharness.models.base import malformed_tool_call, openai_messages, parse_arguments

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class _Retry(Exception):
    """A transient fault: retry after ``wait`` seconds (None: backoff), or give up with ``message``."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.wait = wait


def _env(name: str, default: float) -> float:
    """A non-negative number from ``$REHARNESS_OPENAI_<name>`` (``default`` when unset)."""
    var = f"REHARNESS_OPENAI_{name}"
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0 or (name == "MAX_RETRIES" and not value.is_integer()):
        kind = "a whole number" if name == "MAX_RETRIES" else "a number of seconds"
        raise ConfigError(
            f"${var}={raw!r} is not {kind} >= 0", hint=f"set {var} to e.g. {default:g}, or unset it"
        )
    return value


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Parse a ``Retry-After`` header (delta seconds or HTTP date) into seconds; None when absent/invalid."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class OpenAIBackend(Agent):
    """An agent served by an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
        connect_timeout_s: float = 10.0,
        max_retries: int | None = None,
        backoff_base_s: float | None = None,
        backoff_max_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        max_connections: int = 64,
        logprobs: bool = True,
        extra_body: dict[str, Any] | None = None,
        policy_id: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self.max_retries = max_retries if max_retries is not None else int(_env("MAX_RETRIES", 5))
        self.backoff_base_s = backoff_base_s if backoff_base_s is not None else _env("BACKOFF_S", 0.5)
        self.backoff_max_s = backoff_max_s
        self.max_retry_after_s = max_retry_after_s
        self.limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self.logprobs = logprobs
        self.extra_body = dict(extra_body or {})
        self.policy_id = policy_id or f"openai:{model}"
        self.retries = 0  # total retries made (for logs and tests)
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._jitter = random.Random()

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the connection pool (it belongs to one event loop; a copy, e.g. on a Ray actor,
        opens its own on first use)."""
        return self.__dict__ | {"_client": None, "_client_loop": None}

    # ------------------------------------------------------------------ HTTP
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            register_secret(key)
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _client_for_loop(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            # a pool is bound to the event loop that opened its connections
            self._client = httpx.AsyncClient(
                timeout=self.timeout, limits=self.limits, headers=self._headers()
            )
            self._client_loop = loop
        return self._client

    async def close(self) -> None:
        if self._client is not None and not self._client.is_closed:
            with contextlib.suppress(RuntimeError):  # its event loop is gone; the sockets went with it
                await self._client.aclose()
        self._client = None

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(request.messages),
            "temperature": request.sampling.temperature,
            "top_p": request.sampling.top_p,
            "max_tokens": request.sampling.max_tokens,
            "seed": request.seed & 0x7FFF_FFFF,  # 31 bits: some servers (llama.cpp) keep 32-bit seeds
        }
        if request.tools:
            body["tools"] = list(request.tools)
        if self.logprobs:
            body["logprobs"] = True
        return body | self.extra_body

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter for retry number ``attempt`` (0-based)."""
        cap = min(self.backoff_max_s, self.backoff_base_s * 2**attempt)
        return self._jitter.uniform(cap / 2, cap)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        try:
            response = await self._complete(request)
        except Exception as exc:  # the contract: faults are data, never an exception out of the run
            response = ChatResponse(error=f"openai backend: unexpected {type(exc).__name__}: {exc}"[:1000])
        if response.error is None and not response.retry_errors:
            return response
        return response.model_copy(  # messages quote the server and exceptions: no secret leaves here
            update={
                "error": None if response.error is None else redact(response.error),
                "retry_errors": tuple(redact(e) for e in response.retry_errors),
            }
        )

    async def _complete(self, request: ChatRequest) -> ChatResponse:
        url = f"{self.base_url}/chat/completions"
        last = ""
        waits: list[float] = []
        errors: list[str] = []

        def traced(response: ChatResponse) -> ChatResponse:
            return response.model_copy(
                update={
                    "attempts": len(errors) + 1,
                    "retry_waits_s": tuple(round(w, 3) for w in waits),
                    "retry_errors": tuple(errors),
                }
            )

        for attempt in range(self.max_retries + 1):
            try:
                return traced(await self._attempt(url, request))
            except _Retry as retry:
                last = retry.message
                if attempt == self.max_retries:
                    break
                wait = self.backoff(attempt) if retry.wait is None else retry.wait
                if wait > self.max_retry_after_s:
                    return traced(
                        ChatResponse(
                            error=f"{last}; the server asks to wait {wait:.0f}s (> max_retry_after_s="
                            f"{self.max_retry_after_s:.0f}s)"
                        )
                    )
                self.retries += 1
                errors.append(last[:300])
                waits.append(wait)
                await asyncio.sleep(wait)
        return traced(
            ChatResponse(
                error=f"{last} (gave up after {self.max_retries} retries; check that the server at "
                f"{self.base_url} is up and not overloaded, or raise max_retries "
                "($REHARNESS_OPENAI_MAX_RETRIES))"
            )
        )

    async def _attempt(self, url: str, request: ChatRequest) -> ChatResponse:
        client = self._client_for_loop()
        try:
            reply = await client.post(url, json=self.payload(request))
        except httpx.TimeoutException as exc:
            raise _Retry(f"timeout talking to {url}: {type(exc).__name__}") from exc
        except httpx.TransportError as exc:
            raise _Retry(f"connection error talking to {url}: {type(exc).__name__}: {exc}") from exc
        if reply.status_code in RETRY_STATUS:
            raise _Retry(
                f"HTTP {reply.status_code} from {url}: {_snippet(reply.text)}",
                wait=retry_after_seconds(reply.headers.get("retry-after")),
            )
        if reply.status_code == 400 and self.logprobs and "logprob" in reply.text.lower():
            self.logprobs = False  # this server does not do logprobs; ask without them from now on
            raise _Retry("server rejected logprobs", wait=0.0)
        if reply.status_code >= 400:
            hint = {
                401: f"set a valid API key in ${self.api_key_env}",
                403: f"the key in ${self.api_key_env} may lack access to this model",
                404: f"check the base URL ({self.base_url}) and the model name ({self.model!r})",
            }.get(reply.status_code, "check the request parameters and the server's logs")
            return ChatResponse(error=f"HTTP {reply.status_code} from {url}: {_snippet(reply.text)} ({hint})")
        try:
            data = reply.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _Retry(f"malformed JSON from {url}: {exc}: {_snippet(reply.text)}") from exc
        if isinstance(data, dict) and not data.get("choices"):
            detail = "an error" if data.get("error") else "no choices"
            raise _Retry(
                f"the server returned {detail}: {_snippet(json.dumps(data))}",
                wait=retry_after_seconds(reply.headers.get("retry-after")),
            )
        return parse_completion(data)


def parse_completion(data: Any) -> ChatResponse:
    """Turn a chat-completions JSON reply into a :class:`ChatResponse` (an ``error`` when unusable)."""
    if not isinstance(data, dict):
        return ChatResponse(error=f"malformed reply: expected a JSON object, got {type(data).__name__}")
    if data.get("error") and not data.get("choices"):
        return ChatResponse(error=f"server error: {_snippet(json.dumps(data['error']))}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return ChatResponse(error=f"the server returned no choices: {_snippet(json.dumps(data))}")
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") or {}
    if not isinstance(message, dict):
        return ChatResponse(error=f"malformed choice: {_snippet(json.dumps(choice))}")
    calls: list[ToolCall] = []
    for i, raw in enumerate(message.get("tool_calls") or []):
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            calls.append(
                malformed_tool_call(None, json.dumps(raw), "a tool call needs function.name", f"call_{i}")
            )
            continue
        calls.append(
            parse_arguments(function["name"], function.get("arguments"), raw.get("id") or f"call_{i}")
        )
    logprobs, token_ids = _logprobs(choice.get("logprobs"))
    ids = choice.get("token_ids")
    prompt_ids = data.get("prompt_token_ids") or choice.get("prompt_token_ids")
    usage = data.get("usage")
    reported = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ChatResponse(
        text=content if isinstance(content, str) else "",
        tool_calls=tuple(calls),
        prompt_token_ids=tuple(int(i) for i in prompt_ids) if isinstance(prompt_ids, list) else None,
        completion_token_ids=tuple(int(i) for i in ids) if isinstance(ids, list) else token_ids,
        logprobs=logprobs,
        prompt_tokens=reported if isinstance(reported, int) and reported > 0 else None,
    )


def _logprobs(block: Any) -> tuple[tuple[float, ...] | None, tuple[int, ...] | None]:
    """Per-token logprobs (and ids, when tokens are ``token_id:N``) from a choice's ``logprobs``."""
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, list) or not content:
        return None, None
    try:
        values = tuple(float(t["logprob"]) for t in content)
    except (TypeError, KeyError, ValueError):
        return None, None
    tokens = [t.get("token", "") for t in content]
    if all(isinstance(t, str) and t.startswith("token_id:") and t[9:].isdigit() for t in tokens):
        return values, tuple(int(t[9:]) for t in tokens)
    return values, None


def _snippet(text: str, limit: int = 300) -> str:
    """A redacted one-line excerpt of a server's reply for an error message."""
    text = redact(" ".join(text.split()))
    return text if len(text) <= limit else text[:limit] + "…"

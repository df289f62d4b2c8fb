"""A small OpenAI-compatible chat-completions server for any reharness backend (stdlib asyncio only).

Serves ``POST /v1/chat/completions``, ``GET /v1/models`` and ``GET /health`` over HTTP/1.1 with keep-alive.
Concurrent requests reach the backend concurrently, so an ``hf`` backend micro-batches them. Replies follow
the OpenAI schema, plus vLLM's ``prompt_token_ids`` and per-choice ``token_ids`` when the backend gives
token data. ``n`` asks for that many choices (1..16): choice 0 is sampled with the request's ``seed``, choice
``k`` with a seed derived from it, so a seeded request gives the same choices every time. ``stream: true``
answers with server-sent events as vLLM does (``chat.completion.chunk`` objects, then ``data: [DONE]``;
``stream_options.include_usage`` adds a usage chunk), over chunked transfer encoding. Run one with::

    python -m reharness.models.server tiny:ENV-S --port 8000
    reharness run --env ENV --agent openai:tiny@http://127.0.0.1:8000/v1

**Fault injection** (for testing clients): append :class:`Fault` objects to :attr:`ChatServer.faults`; each
chat request consumes the first one instead of a normal reply — an HTTP status with headers
(``Fault("status", 500)``, ``Fault("status", 429, headers={"Retry-After": "1"})``), a connection that never
answers (``hang``), a reply that is not JSON (``malformed``), a reply with no choices (``empty_choices``) or
a connection closed without a reply (``drop``). Bind to 127.0.0.1 unless you mean to expose the model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from reharness.core.agent import Agent
from reharness.core.hashing import derive_seed
from reharness.core.types import ChatResponse
from reharness.models.base import arguments_json, strip_tool_calls
from reharness.models.server_request import BadRequest, choice_options, request_from_openai
from reharness.models.server_stream import DONE, completion_chunks, sse

FaultKind = Literal["status", "hang", "malformed", "empty_choices", "drop"]
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
}
_MAX_BODY = 64 * 1024 * 1024


@dataclass
class Fault:
    """One injected fault, consumed by the next chat request."""

    kind: FaultKind
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)


class ChatServer:
    """Serve ``backend`` at ``http://HOST:PORT/v1`` (port 0 picks a free port)."""

    def __init__(
        self, backend: Agent, model_name: str = "local", host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.backend = backend
        self.model_name = model_name
        self.host, self.port = host, port
        self.faults: deque[Fault] = deque()
        self.request_times: list[float] = []  # monotonic arrival time of every chat request
        self.last_headers: dict[str, str] = {}  # headers of the latest request (lower-case names)
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[Any]] = set()
        self._counter = 0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.base_url

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # ------------------------------------------------------------------ HTTP/1.1
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, *_ = lines[0].split(" ") + ["", ""]
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)
                }
                length = int(headers.get("content-length", "0") or 0)
                if length > _MAX_BODY:
                    await self._send(writer, 400, _error("request body too large"), close=True)
                    return
                body = await reader.readexactly(length) if length else b""
                keep = headers.get("connection", "").lower() != "close"
                self.last_headers = headers
                status, payload, extra = await self._route(method, path.split("?")[0], body)
                if status < 0:  # injected: drop the connection without a reply
                    return
                if isinstance(payload, list):
                    await self._send_stream(writer, status, payload, extra, close=not keep)
                else:
                    await self._send(writer, status, payload, extra, close=not keep)
                if not keep:
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            return
        except asyncio.CancelledError:  # the server is stopping: close quietly (asyncio would log the cancel)
            return
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: bytes,
        extra: dict[str, str] | None = None,
        close: bool = False,
    ) -> None:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(payload))} | (extra or {})
        if close:
            headers["Connection"] = "close"
        head = f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        writer.write(head.encode("latin-1") + payload)
        await writer.drain()

    async def _send_stream(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        events: list[bytes],
        extra: dict[str, str],
        close: bool = False,
    ) -> None:
        """Send ``events`` one HTTP chunk each (``Transfer-Encoding: chunked``), flushing every chunk."""
        headers = extra | {"Transfer-Encoding": "chunked"} | ({"Connection": "close"} if close else {})
        head = f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        writer.write(head.encode("latin-1"))
        for event in events:
            writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def _route(
        self, method: str, path: str, body: bytes
    ) -> tuple[int, bytes | list[bytes], dict[str, str]]:
        if path in ("/health", "/v1/health") and method == "GET":
            return 200, b'{"status": "ok"}', {}
        if path == "/v1/models" and method == "GET":
            models = {
                "object": "list",
                "data": [{"id": self.model_name, "object": "model", "owned_by": "reharness"}],
            }
            return 200, json.dumps(models).encode(), {}
        if path != "/v1/chat/completions":
            return 404, _error(f"no route {path}; use /v1/chat/completions"), {}
        if method != "POST":
            return 405, _error("use POST"), {}
        self.request_times.append(time.monotonic())
        if self.faults:
            return await self._fault(self.faults.popleft())
        try:
            data = json.loads(body)
            request = request_from_openai(data)
            n, stream, include_usage = choice_options(data)
        except (json.JSONDecodeError, UnicodeDecodeError, BadRequest) as exc:
            return 400, _error(f"invalid request: {exc}"), {}
        requests = [request] + [
            request.model_copy(update={"seed": derive_seed(request.seed, "choice", k)}) for k in range(1, n)
        ]
        try:  # concurrently, so a batching backend decodes the n choices together
            responses = await asyncio.gather(*(self.backend.complete(r) for r in requests))
        except Exception as exc:  # an agent that raises is a server error, not a dropped connection
            return 500, _error(f"backend failed: {type(exc).__name__}: {exc}"[:1000]), {}
        failed = next((r for r in responses if r.error), None)
        if failed is not None and failed.error:
            client_fault = failed.error.startswith(("prompt has", "chat template failed"))
            return (400 if client_fault else 500), _error(failed.error), {}
        completion = self._completion(data, list(responses))
        if stream:
            events = [sse(c) for c in completion_chunks(completion, include_usage)] + [DONE]
            return 200, events, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        return 200, json.dumps(completion).encode(), {}

    async def _fault(self, fault: Fault) -> tuple[int, bytes, dict[str, str]]:
        if fault.kind == "hang":
            await asyncio.Event().wait()  # until the client gives up or the server stops
        if fault.kind == "drop":
            return -1, b"", {}
        if fault.kind == "malformed":
            return 200, b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "trunc', {}
        if fault.kind == "empty_choices":
            return (
                200,
                json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "choices": []}).encode(),
                {},
            )
        return fault.status, _error(f"injected fault: HTTP {fault.status}"), dict(fault.headers)

    def _completion(self, data: dict[str, Any], responses: list[ChatResponse]) -> dict[str, Any]:
        self._counter += 1
        choices = [self._choice(data, k, response) for k, response in enumerate(responses)]
        prompt = list(responses[0].prompt_token_ids or ())
        completion_tokens = sum(len(r.completion_token_ids or ()) for r in responses)
        return {
            "id": f"chatcmpl-{self._counter}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": data.get("model") or self.model_name,
            "choices": choices,
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": completion_tokens,
                "total_tokens": len(prompt) + completion_tokens,
            },
            **({"prompt_token_ids": prompt} if responses[0].prompt_token_ids is not None else {}),
        }

    def _choice(self, data: dict[str, Any], index: int, response: ChatResponse) -> dict[str, Any]:
        ids = list(response.completion_token_ids or ())
        stop_ids = getattr(self.backend, "stop_ids", None)
        finish = "length" if stop_ids is not None and (not ids or ids[-1] not in stop_ids) else "stop"
        message: dict[str, Any] = {"role": "assistant", "content": response.text}
        if response.tool_calls:
            finish = "tool_calls"
            message["content"] = strip_tool_calls(response.text) or None
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments_json(call)},
                }
                for i, call in enumerate(response.tool_calls)
            ]
        choice: dict[str, Any] = {
            "index": index,
            "message": message,
            "finish_reason": finish,
            "logprobs": None,
        }
        if response.completion_token_ids is not None:
            choice["token_ids"] = ids
        if data.get("logprobs") and response.logprobs is not None:
            as_ids = bool(data.get("return_tokens_as_token_ids"))
            tokenizer = getattr(self.backend, "tokenizer", None)
            tokens = [
                f"token_id:{i}" if as_ids or tokenizer is None else tokenizer.decode([i]) for i in ids
            ] or ["" for _ in response.logprobs]
            choice["logprobs"] = {
                "content": [
                    {"token": t, "logprob": lp, "top_logprobs": []}
                    for t, lp in zip(tokens, response.logprobs, strict=False)
                ]
            }
        return choice


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()


class ServerThread:
    """Run a :class:`ChatServer` on its own event loop in a daemon thread (tests, notebooks, benchmarks)."""

    def __init__(self, server: ChatServer) -> None:
        self.server = server
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="reharness-server", daemon=True)

    def start(self) -> str:
        self._thread.start()
        return asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(timeout=30)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(timeout=30)
        asyncio.run_coroutine_threadsafe(self.server.backend.close(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()

    def __enter__(self) -> ChatServer:
        self.start()
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """``python -m reharness.models.server SPEC``: serve a backend until interrupted (``--port 0``: a free
    port, printed). A bad spec or option is a one-line error with its fix (exit status 2), not a traceback."""
    from reharness.core.errors import ReharnessError
    from reharness.models.registry import backend_options, make_backend

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("spec", help="backend to serve: hf:PATH, tiny:NAME or pretrained:NAME[@ENGINE]")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0: any free port (the URL is printed)")
    parser.add_argument("--model-name", default=None, help="name reported by /v1/models (default: the spec)")
    parser.add_argument("--device", default=None, help="cpu (default), cuda, cuda:N or mps")
    parser.add_argument("--gguf-file", default=None, help="with hf:DIR: the GGUF file inside DIR to serve")
    args = parser.parse_args(argv)
    try:
        options: dict[str, Any] = dict(
            backend_options(args.spec, device=args.device, gguf_file=args.gguf_file)
        )
        backend = make_backend(args.spec, **options)
        server = ChatServer(backend, args.model_name or args.spec, args.host, args.port)
    except ReharnessError as exc:
        print(f"error: {exc}", flush=True)  # the error's own format: [code] message, then how to fix
        raise SystemExit(2) from None

    async def serve() -> None:
        url = await server.start()
        print(f"serving {args.spec} at {url} (Ctrl-C stops)", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()

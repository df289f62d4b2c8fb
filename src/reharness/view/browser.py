"""A headless Chromium driven through the DevTools protocol over a pipe, for checking and measuring pages.

The viewer's tests, its benchmark and the screenshot in the docs open pages with it: it loads a page, runs
JavaScript in it, and records what a user could not see from a dump of the DOM — uncaught exceptions, console
errors, and every network request the page makes. It speaks the protocol over ``--remote-debugging-pipe``
(file descriptors 3 and 4, messages separated by NUL bytes), so it needs no WebSocket library and opens no
port. The browser is Debian's ``chromium`` (or ``$REHARNESS_CHROMIUM``); :func:`find_chromium` says whether
one is installed.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from reharness.core.errors import ConfigError

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The Chromium executable to use, or None when none is installed."""
    chosen = os.environ.get("REHARNESS_CHROMIUM")
    if chosen:
        return shutil.which(chosen) or (chosen if Path(chosen).is_file() else None)
    return next((found for name in _NAMES if (found := shutil.which(name))), None)


class BrowserError(RuntimeError):
    """The browser died, timed out, or a protocol command failed."""


class Browser:
    """One headless Chromium with one page. Use as a context manager.

    ``console_errors``, ``exceptions`` and ``requests`` collect, since the last :meth:`open`, the console
    messages of level error, the uncaught exceptions and the URLs of every network request (``file:`` and
    ``data:`` URLs included; a self-contained page requests nothing else).
    """

    def __init__(self, executable: str | None = None, timeout_s: float = 30.0) -> None:
        found = executable or find_chromium()
        if found is None:
            raise ConfigError(
                "no Chromium browser found", hint="install it (Debian: apt-get install chromium)"
            )
        self.timeout_s = timeout_s
        self._profile = tempfile.TemporaryDirectory(prefix="reharness-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def _pipes_on_3_and_4() -> None:  # runs in the child, before exec
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            found,
            "--headless",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile.name}",
            "about:blank",
        ]
        self._process = subprocess.Popen(
            args,
            preexec_fn=_pipes_on_3_and_4,  # noqa: PLW1509 - the protocol needs fds 3 and 4
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.console_errors: list[str] = []
        self.exceptions: list[str] = []
        self.requests: list[str] = []
        target = self._command("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self._command("Target.attachToTarget", {"targetId": target, "flatten": True})
        self._session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.command(f"{domain}.enable")

    # ------------------------------------------------------------------ protocol
    def _send(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("the browser exited")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def _record(self, event: dict[str, Any]) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.exceptions.append(
                str(details.get("exception", {}).get("description") or details.get("text"))
            )
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.console_errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.console_errors.append(str(params["entry"].get("text")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(str(params.get("request", {}).get("url")))
        self._events.append(event)

    def _command(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        sent = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout_s
        while True:
            message = self._read_message(deadline)
            if message.get("id") == sent:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            if "method" in message:
                self._record(message)

    def command(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one protocol command to the page; return its result."""
        return self._command(method, params, self._session)

    def wait_for(self, method: str) -> dict[str, Any]:
        """Wait for the next page event named ``method`` (events already received count)."""
        deadline = time.monotonic() + self.timeout_s
        for i, event in enumerate(self._events):
            if event.get("method") == method:
                del self._events[: i + 1]
                return event
        while True:
            message = self._read_message(deadline)
            if "method" in message:
                self._record(message)
                if message["method"] == method:
                    self._events.clear()
                    return message

    # ------------------------------------------------------------------ page
    def open(self, url: str) -> float:
        """Load ``url`` and wait for its load event; return the seconds it took."""
        self._events.clear()
        self.command(
            "Page.navigate", {"url": "about:blank"}
        )  # so a URL differing only by its hash loads afresh
        self.wait_for("Page.loadEventFired")
        self.console_errors, self.exceptions, self.requests = [], [], []
        start = time.monotonic()
        self.command("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")
        return time.monotonic() - start

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises are awaited)."""
        result = self.command(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} raised: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def screenshot(self, path: str | Path, width: int = 1400, height: int = 900) -> Path:
        """Save a PNG of the page at ``width`` × ``height`` CSS pixels."""
        self.command(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        shot = self.command("Page.captureScreenshot", {"format": "png"})
        out = Path(path)
        out.write_bytes(base64.b64decode(shot["data"]))
        return out

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self._command("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""``reharness view PATH [--out FILE.html] [--serve [--port P]]``: one self-contained HTML page of a run,
an improve output, a pool or a training output (:mod:`reharness.view`).

Without ``--serve`` the page is written to ``--out`` (default: ``PATH/view.html``, or ``PATH.html`` beside a
file) and its path printed. With ``--serve`` it is served on ``http://127.0.0.1:PORT/`` until interrupted
(also written when ``--out`` is given); the page is rebuilt on each request, so a run still being written
shows its new episodes on reload.
"""

from __future__ import annotations

import http.server
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from reharness.cli.common import friendly_errors, stderr
from reharness.core.errors import ConfigError
from reharness.view import build_page, render_html


def _page(path: Path) -> bytes:
    return render_html(build_page(path)).encode("utf-8")


def serve(
    path: Path, port: int, on_ready: Callable[[http.server.ThreadingHTTPServer], None] | None = None
) -> None:
    """Serve the page of ``path`` on 127.0.0.1 until interrupted or shut down (``on_ready`` gets the server
    once it listens)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            if self.path.split("?", 1)[0].split("#", 1)[0] not in ("/", "/index.html"):
                self.send_error(404, "the viewer serves one page: /")
                return
            body = _page(path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on 127.0.0.1:{port} ({exc.strerror})", hint="pass another --port"
        ) from exc
    stderr.print(f"serving {path} on http://127.0.0.1:{server.server_port}/ (Ctrl-C stops)", highlight=False)
    if on_ready is not None:
        on_ready(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@friendly_errors
def view(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH",
            help="A run directory, a folder of runs, or the --out of improve, pool, train, experiment.",
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the page here (default: PATH/view.html).")
    ] = None,
    serve_page: Annotated[bool, typer.Option("--serve", help="Serve the page on 127.0.0.1 instead.")] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port for --serve (0: any free port).")] = 8765,
) -> None:
    """Write one self-contained HTML page (no network at view time) to read trajectories: a run's summary,
    failure codes, task grid, filters and step-by-step episodes; improve's paired view; pool and training
    tables and curves."""
    if serve_page:
        if out is not None:
            out.write_bytes(_page(path))
        serve(path, port)
        return
    target = out or (path / "view.html" if path.is_dir() else path.with_suffix(".html"))
    body = _page(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(body)
    typer.echo(str(target))

"""One self-contained HTML file: the page's data, its styles and its script, all inline.

The page declares a Content-Security-Policy that allows nothing from the network (``default-src 'none'``;
inline styles, inline scripts and ``data:`` images only), so a page cannot load anything at view time even
if a trajectory's text contained a URL. The main JSON is parsed on load; the episodes' steps stay as text
until one is opened (:mod:`reharness.view.model`).
"""

from __future__ import annotations

import html
from importlib import resources

from reharness.view.model import PageData, script_safe_json

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def asset(name: str) -> str:
    return resources.files("reharness.view").joinpath("assets", name).read_text(encoding="utf-8")


def render_html(page: PageData) -> str:
    """The page as one HTML document."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(page.title)}</title>",
            f"<style>{asset('view.css')}</style>",
            "</head><body>",
            '<header id="top"><h1 id="title"></h1><nav id="tabs"></nav><span id="source"></span></header>',
            '<main id="app"><p id="loading">loading…</p></main>',
            '<div id="errors" hidden></div>',
            f'<script type="application/json" id="page-data">{script_safe_json(page.payload())}</script>',
            f'<script type="text/plain" id="episode-details">{page.details}</script>',
            f"<script>{asset('view.js')}</script>",
            "</body></html>",
        ]
    )

"""``python -m reharness.view.screenshot PAGE.html OUT.png [--hash H] [--scroll-to SELECTOR]``: a PNG of a
viewer page in headless Chromium (the docs' screenshot of the paired view is made this way)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from reharness.view.browser import Browser


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--hash", default="", help="the view to open, e.g. 'cmp=heldout&pair=TASK'")
    parser.add_argument("--scroll-to", default=None, help="a CSS selector to scroll to the top of the window")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    with Browser() as browser:
        browser.command(
            "Emulation.setDeviceMetricsOverride",
            {"width": args.width, "height": args.height, "deviceScaleFactor": 1, "mobile": False},
        )
        browser.open(args.page.resolve().as_uri() + (f"#{args.hash}" if args.hash else ""))
        if args.scroll_to:
            browser.evaluate(f"document.querySelector({json.dumps(args.scroll_to)}).scrollIntoView()")
        browser.screenshot(args.out, args.width, args.height)
    print(args.out)


if __name__ == "__main__":
    main()

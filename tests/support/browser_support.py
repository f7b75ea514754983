"""Headless Chromium for the browser tests: /usr/bin/chromium driven by Playwright.

Playwright's own browser download cannot work here, so the tests use Debian's
chromium (`make test` installs it) with flags that stop it from calling home.
"""
from __future__ import annotations

import contextlib
import os
import tempfile

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def require_browser():
    """Skip (with the reason) when Chromium or Playwright is missing."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium; `make test` does it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install playwright; `make test` does it)")


@contextlib.contextmanager
def chromium(viewport=(1300, 900)):
    """A fresh browser context with a throw-away profile."""
    require_browser()
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory(prefix="gradviz-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": viewport[0], "height": viewport[1]})
        try:
            yield context
        finally:
            context.close()


def open_player(context, path):
    """(page, root): a saved player opened in a new page of `context`, with reduced motion (steps
    drawn at once), its `.gv-player` shown."""
    page = context.new_page()
    page.emulate_media(reduced_motion="reduce")
    page.goto(path.as_uri())
    root = page.locator(".gv-player").first
    root.wait_for()
    return page, root

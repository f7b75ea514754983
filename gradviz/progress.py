"""Progress on work that takes a while: a bar (tqdm: a widget in a notebook, text on a terminal)
that appears only once the work has run for DELAY seconds, so quick views print nothing.

Interrupting (Ctrl-C, a notebook's stop button) closes the bar; the views that use it build from a
recorded Trace and change nothing of the user's, so an interrupted view leaves no state behind.
"""
from __future__ import annotations

from contextlib import contextmanager

from tqdm.auto import tqdm

DELAY = 1.0    # seconds before a bar is shown
MIN_ITEMS = 200   # fewer items than this never take a second worth showing


def progress(items, desc: str, total: int | None = None, unit: str = "step"):
    """`items`, yielded one by one, with a progress bar named `desc` once they take over DELAY seconds."""
    total = len(items) if total is None and hasattr(items, "__len__") else total
    if total is not None and total < MIN_ITEMS:
        yield from items
        return
    bar = tqdm(items, desc=desc, total=total, unit=unit, delay=DELAY, leave=False, dynamic_ncols=True)
    try:
        yield from bar
    finally:
        bar.close()


@contextmanager
def ticking(desc: str, total: int | None, unit: str = "step"):
    """For work that reports its own items (a callback): a function to call once per item done, which
    moves the same bar as `progress` (none for fewer than MIN_ITEMS); None when there is no bar."""
    if total is not None and total < MIN_ITEMS:
        yield None
        return
    bar = tqdm(desc=desc, total=total, unit=unit, delay=DELAY, leave=False, dynamic_ncols=True)
    try:
        yield bar.update
    finally:
        bar.close()

"""Building tens of thousands of records at once (a big graph's Trace, the plan of its diagram)
with Python's cyclic garbage collector paused.

Every full collection walks every live object, and a 20,000-node graph's Trace and its fold
allocate enough records to start several, each walking the user's graph, the Trace and the
model again: drawing then grew faster than the graph (120 µs of CPU a node at 20,000 nodes
against 92 at 5,000; half of it collecting, none of it freeing). What these builders drop is
freed by reference counting as usual; a reference cycle made meanwhile waits for the first
collection after.
"""
from __future__ import annotations

import functools
import gc


def bulk(build):
    """`build`, run with the cyclic collector paused (and resumed after, unless it was off)."""
    @functools.wraps(build)
    def run(*args, **kwargs):
        was_on = gc.isenabled()
        gc.disable()
        try:
            return build(*args, **kwargs)
        finally:
            if was_on:
                gc.enable()
    return run

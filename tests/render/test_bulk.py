"""Recording and planning a diagram pause Python's cyclic collector, and leave it as they found it."""
import gc

import pytest

import gradviz
from gradviz.bulk import bulk
from gradviz.render import Diagram
from gradviz.tracing import build_trace


def test_recording_and_planning_run_without_collections_and_leave_the_collector_on():
    x = gradviz.randn(3, requires_grad=True)
    y = x
    for _ in range(300):
        y = y * 1.01
    loss = y.sum()
    started = []

    def count(phase, info):
        if phase == "start":
            started.append(info["generation"])
    gc.callbacks.append(count)
    try:
        assert gc.isenabled()
        # one pause around both: the inner ones (nested) leave the collector off for the outer
        diagram = bulk(lambda: Diagram(build_trace([loss])))()
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(count)
    assert started == [] and diagram.view.groups


def test_a_collector_turned_off_stays_off_and_an_error_resumes_it():
    @bulk
    def fails():
        assert not gc.isenabled()
        raise ValueError("stop")
    with pytest.raises(ValueError, match="stop"):
        fails()
    assert gc.isenabled()
    gc.disable()
    try:
        bulk(lambda: None)()
        assert not gc.isenabled()
    finally:
        gc.enable()

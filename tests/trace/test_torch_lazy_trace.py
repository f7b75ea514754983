"""A torch backward run through is recorded at the cost of torch's own run: its Trace is made when a
view first reads it, from what was taken while the graph was whole (each node's saved tensors, the
leaves' values and .grad) and what torch's hooks handed over (the gradients, the order of steps). So
the Trace read later is the Trace read at once, whatever torch did to the graph meanwhile (freed it,
ran it again), and a tensor written in place since shows its shape, never a later value."""
import copy
import pickle
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradviz.tracing import LazyTrace, Trace  # noqa: E402
from gradviz.torch_bridge import record_torch  # noqa: E402
from tests.support.torch_models import MODELS  # noqa: E402

pytestmark = pytest.mark.torch


def _json(trace) -> dict:
    return trace.to_json()


def _ops(trace) -> dict:
    return {n.id: n for n in trace.nodes if n.kind == "op"}


@pytest.mark.parametrize("name", list(MODELS))
def test_a_trace_read_after_torch_freed_the_graph_is_the_trace_read_at_once(name):
    case = MODELS[name]()
    loss = case.loss()
    at_once = record_torch(loss, model=case.model).run()
    assert _json(at_once)   # read now
    later = record_torch(loss, model=case.model).run()
    assert isinstance(later, LazyTrace) and not later.built()
    loss.backward()   # the script's own backward: frees every tensor the nodes saved
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    assert _json(later) == _json(at_once)


@pytest.mark.parametrize("name", list(MODELS))
def test_retain_graph_false_records_the_same_trace(name):
    case = MODELS[name]()
    loss = case.loss()
    kept = _json(record_torch(loss, model=case.model).run())
    assert _json(record_torch(loss, model=case.model, retain_graph=False).run()) == kept


def test_saved_values_written_in_place_since_show_their_shape_never_a_later_value():
    w = torch.nn.Parameter(torch.randn(3))
    scale = torch.tensor([2.0, 3.0, 4.0])   # needs no gradient: its values are shown (in_values)
    data = torch.tensor([1.0, 5.0, 7.0])
    e = torch.exp(w * scale)                 # exp saves its result: the node's value
    loss = (e * data).sum()
    trace = record_torch(loss, names={"w": w}).run()
    with torch.no_grad():
        e.add_(100.0)        # the saved result, through an in-place op: its version moves
    scale.data.mul_(10.0)    # through .data: no version moves, the sample does
    data.add_(1.0)
    exp = next(n for n in trace.nodes if n.name == "ExpBackward0")
    assert exp.value.shape == (3,) and exp.value.values is None
    for node in trace.nodes:
        for cell in node.in_values:
            if cell is not None:   # never the values written since
                assert cell.values is None or not (np.allclose(cell.values, [20.0, 30.0, 40.0])
                                                    or np.allclose(cell.values, [2.0, 6.0, 8.0]))


def test_saved_values_not_written_since_are_shown_as_recorded():
    w = torch.nn.Parameter(torch.randn(3))
    scale = torch.tensor([2.0, 3.0, 4.0])
    loss = torch.exp(w * scale).sum()
    expected = torch.exp(w * scale).detach().numpy().copy()
    trace = record_torch(loss, names={"w": w}).run()
    loss.backward()   # frees the saved tensors: the Trace holds its own
    exp = next(n for n in trace.nodes if n.name == "ExpBackward0")
    assert np.allclose(exp.value.values, expected)
    mul = next(n for n in trace.nodes if n.name == "MulBackward0")
    assert np.array_equal(mul.in_values[1].values, [2.0, 3.0, 4.0])


def test_a_gradient_a_hook_writes_in_place_shows_its_shape_never_the_later_value():
    w = torch.nn.Parameter(torch.ones(3))
    h = w * 2
    h.register_hook(lambda g: g.mul_(10.0))   # torch asks hooks not to write their argument
    loss = (h * 3).sum()
    trace = record_torch(loss, names={"w": w}).run()
    by_node = {s.node: s for s in trace.steps}
    outer, inner = [n.id for n in trace.nodes if n.name == "MulBackward0"][::-1]   # h * 3, then w * 2
    sent = by_node[outer].flows[0].grad   # 3s when sent, 30s once the hook wrote it
    assert sent.shape == (3,) and sent.values is None
    assert np.array_equal(by_node[inner].flows[0].grad.values, [60.0] * 3)   # what reached w: torch's


def test_a_stepped_recording_makes_its_trace_before_the_first_step():
    case = MODELS["mlp"]()
    rec = record_torch(case.loss(), model=case.model)
    assert not rec.trace.built()
    rec.upcoming()
    assert rec.trace.built() and rec.trace.nodes and rec.trace.steps == []
    rec.step()
    assert len(rec.trace.steps) == 1
    rec.close()


def test_a_lazy_trace_copied_or_pickled_is_a_plain_trace_with_the_same_contents():
    case = MODELS["mlp"]()
    lazy = record_torch(case.loss(), model=case.model).run()
    copied = pickle.loads(pickle.dumps(lazy))
    assert type(copied) is Trace and _json(copied) == _json(lazy)
    shallow = copy.copy(record_torch(case.loss(), model=case.model).run())
    assert type(shallow) is Trace and len(shallow.nodes) == len(lazy.nodes)


def test_two_threads_reading_one_lazy_trace_both_see_it_whole():
    case = MODELS["gpt"]()
    expected = _json(record_torch(case.loss(), model=case.model).run())
    for _ in range(5):
        lazy = record_torch(case.loss(), model=case.model).run()
        seen = []
        readers = [threading.Thread(target=lambda: seen.append((len(lazy.nodes), len(lazy.steps))))
                   for _ in range(3)]
        for r in readers:
            r.start()
        for r in readers:
            r.join()
        assert seen == [(len(expected["nodes"]), len(expected["steps"]))] * 3


def test_a_thread_reading_while_another_makes_the_trace_waits_for_it_whole():
    made_half, finish = threading.Event(), threading.Event()

    def build(trace):
        trace.nodes.append("n0")   # the making thread reads its own fields as it makes them
        made_half.set()
        finish.wait(10)
        trace.nodes.append("n1")

    lazy = LazyTrace(build)
    maker = threading.Thread(target=lambda: lazy.nodes)
    maker.start()
    assert made_half.wait(10)
    seen = []
    reader = threading.Thread(target=lambda: seen.append(list(lazy.nodes)))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive() and seen == []   # waiting for the maker, not reading half a trace
    finish.set()
    maker.join(10)
    reader.join(10)
    assert seen == [["n0", "n1"]] and lazy.built()


def test_an_error_while_making_leaves_the_trace_to_be_made_again():
    calls = []

    def build(trace):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("not yet")
        trace.nodes.append("n")

    lazy = LazyTrace(build)
    with pytest.raises(ValueError, match="not yet"):
        lazy.nodes
    assert not lazy.built() and lazy.nodes == ["n"] and lazy.built() and len(calls) == 2


def test_a_saved_number_written_through_data_since_is_not_shown_as_its_later_value():
    x = torch.nn.Parameter(torch.ones(3))
    scale = torch.tensor(2.0, requires_grad=True)   # a learnable scalar: mul saves it, its panel shows 2.0
    trace = record_torch((x * scale).sum(), names={"x": x, "scale": scale}).run()
    scale.data.fill_(5.0)   # as a hand-written update through .data: no version moves
    mul = next(n for n in trace.nodes if n.name == "MulBackward0")
    shown = " ".join(text for _, text in mul.attrs) + repr(mul.constants)
    assert "5.0" not in shown and "2.0" not in shown and "other" in dict(mul.attrs)
    fresh = record_torch((x * scale).sum(), names={"x": x, "scale": scale}).run()
    assert "5.0" in " ".join(text for _, text in next(n for n in fresh.nodes if n.name == "MulBackward0").attrs)


def test_grads_now_before_the_first_step_is_each_leafs_grad_as_it_is():
    w = torch.nn.Parameter(torch.ones(3))
    w.grad = torch.full((3,), 4.0)
    rec = record_torch((w * 2).sum(), names={"w": w})
    leaf = next(n for n in rec.trace.nodes if n.kind == "leaf")
    assert np.array_equal(rec.grads_now()[leaf.id].values, [4.0] * 3)
    rec.run()
    assert rec.grads_now() == {} and np.array_equal(w.grad.numpy(), [4.0] * 3)


def test_a_trace_whose_saved_bound_was_written_since_is_still_made():
    x = torch.nn.Parameter(torch.tensor([-2.0, 0.5, 3.0]))
    low = torch.tensor([-1.0, -1.0, -1.0])   # clamp(x, min=tensor) saves it; asked for by hasattr
    trace = record_torch(torch.clamp(x, min=low).sum(), names={"x": x}).run()
    low.add_(10.0)
    clamp = next(n for n in trace.nodes if n.name.startswith("Clamp"))
    assert "11.0" not in repr(clamp.constants) + repr(clamp.attrs) + repr(clamp.in_values)

"""The torch bridge previews lazily: a recorded Trace holds its tensors and reads a value when a
view first asks for it. What it then shows is what `preview` would have shown at record time, or,
where the tensor was written in place since (by torch or through `.data`), its shape alone: never
a later value. `animate`, which shows every value, reads each gradient as torch hands it over."""
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.previews import Preview  # noqa: E402
from gradviz.records import from_json, to_json  # noqa: E402
from gradviz.torch_bridge import record_torch, trace_from_torch  # noqa: E402
from gradviz.torch_bridge.previews import LazyPreview, Previews, Taken, preview  # noqa: E402

pytestmark = pytest.mark.torch


def _same(a: Preview, b: Preview) -> None:
    assert (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)
    for name in ("values", "thumb"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None) and (x is None or np.array_equal(x, y))
    assert a.stats == b.stats


@pytest.mark.parametrize("shape", [(), (5,), (8, 8), (3, 100), (2, 3, 40, 41), (70000,)])
def test_a_lazy_preview_is_the_preview_taken_at_once(shape):
    t = torch.randn(shape)
    lazy = Previews().of(t)
    assert isinstance(lazy, LazyPreview) and "_source" in lazy.__dict__   # nothing read yet
    _same(lazy, preview(t))
    assert lazy.to_json() == preview(t).to_json()


def test_each_tensor_is_previewed_once_and_the_budget_bounds_what_is_held():
    previews = Previews(held_max=4 * 100)
    a, b = torch.randn(100), torch.randn(100)
    assert previews.of(a) is previews.of(a)
    assert isinstance(previews.of(a), LazyPreview) and not isinstance(previews.of(b), LazyPreview)


def test_a_leaf_written_after_recording_shows_its_shape_not_a_later_value():
    w = torch.nn.Parameter(torch.randn(4, 4))
    v = torch.nn.Parameter(torch.randn(4, 4))
    trace = record_torch((w * v).sum(), names={"w": w, "v": v}).run()
    with torch.no_grad():
        w.add_(1.0)        # as an optimizer step does: the version counter moves
    v.data.mul_(3.0)       # through .data: no counter moves, the sample of values does
    leaves = {n.name: n for n in trace.nodes if n.kind == "leaf"}
    for name in ("w", "v"):
        value = leaves[name].value
        assert value.shape == (4, 4) and value.values is None and value.stats is None


def test_values_read_before_a_write_stay():
    w = torch.nn.Parameter(torch.randn(3))
    trace = trace_from_torch((w * 2).sum(), params={"w": w})
    before = w.detach().clone().numpy()
    leaf = next(n for n in trace.nodes if n.kind == "leaf")
    assert np.array_equal(leaf.value.values, before)
    with torch.no_grad():
        w.zero_()
    assert np.array_equal(leaf.value.values, before)


def test_gradients_shown_equal_torchs_after_the_recording_closed():
    torch.manual_seed(0)
    x = torch.randn(6, 5)
    lin = torch.nn.Linear(5, 300)   # a weight large enough for a summary, a bias of values
    loss = torch.tanh(lin(x)).pow(2).mean()
    trace = record_torch(loss, model=lin).run()
    loss.backward()
    grads = {n.name: n.grad for n in trace.nodes if n.kind == "leaf"}
    _same(grads["weight"], preview(lin.weight.grad))
    _same(grads["bias"], preview(lin.bias.grad))
    for step in trace.steps:   # every gradient in the steps: filled, and the JSON holds them
        for flow in step.flows:
            assert flow.grad.stats is not None
    again = from_json(type(trace.steps[0]), to_json(trace.steps[0]))
    assert to_json(again) == to_json(trace.steps[0])


def test_a_grad_that_existed_before_is_shown_as_torch_accumulates_it():
    w = torch.nn.Parameter(torch.ones(3))
    w.grad = torch.full((3,), 10.0)
    trace = record_torch((w * 2).sum(), names={"w": w}, write_grads=True).run()
    acc = next(a for s in trace.steps for a in s.accumulations)
    assert np.array_equal(acc.before.values, [10.0] * 3) and np.array_equal(acc.contribution.values, [2.0] * 3)
    assert np.array_equal(acc.total.values, [12.0] * 3) and np.array_equal(w.grad.numpy(), [12.0] * 3)


def test_two_threads_reading_one_preview_both_get_its_values():
    t = torch.randn(300, 300)
    for _ in range(20):
        lazy = Previews().of(t)
        got = []
        readers = [threading.Thread(target=lambda: got.append(lazy.stats)) for _ in range(2)]
        for r in readers:
            r.start()
        for r in readers:
            r.join()
        assert got[0] is not None and got[0] == got[1] == preview(t).stats


def test_a_tensor_with_no_strided_data_is_described_by_its_shape_at_once():
    sparse = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2),
                                     check_invariants=True)
    meta = torch.empty(3, 4, device="meta")
    for t in (sparse, meta):
        p = Previews().of(t)
        assert not isinstance(p, LazyPreview) and p.shape == tuple(t.shape) and p.values is None


@pytest.mark.parametrize("make", [lambda: torch.randn(3, 100), lambda: torch.randn(500, 300),
                                  lambda: torch.randn(4, 128, 38).to(torch.float16),
                                  lambda: torch.randint(-5, 9, (40, 40)), lambda: torch.randn(200) > 0])
def test_a_large_tensors_extremes_are_read_alone_and_are_its_stats_ends(make):
    """An edge's width reads a gradient's extremes only: a large tensor's mean and heatmap wait for a
    view that shows them, and, read later, agree with the extremes and with a preview taken at once."""
    t = make()
    lazy = Previews().of(t)
    ends = lazy.extremes()
    assert "_source" in lazy.__dict__ and "thumb" not in lazy.__dict__   # the heatmap is not read yet
    _same(lazy, preview(t))
    assert ends == (lazy.stats[0], lazy.stats[2]) == lazy.extremes()


@pytest.mark.parametrize("values", [[1.0, float("nan")] * 50, [float("-inf"), 2.0, 3.0] * 30])
def test_extremes_of_non_finite_values_are_the_stats_ends(values):
    t = torch.tensor(values)
    lazy = Previews().of(t)
    ends = lazy.extremes()
    at_once = preview(t)
    assert np.array_equal(lazy.stats, at_once.stats, equal_nan=True) and np.array_equal(lazy.thumb, at_once.thumb)
    assert np.array_equal(ends, (lazy.stats[0], lazy.stats[2]), equal_nan=True)


def test_a_small_tensor_is_previewed_whole_when_its_extremes_are_asked():
    t = torch.tensor([[-3.0, 2.0], [0.5, 1.0]])
    lazy = Previews().of(t)
    assert lazy.extremes() == (-3.0, 2.0) and "_source" not in lazy.__dict__
    assert np.array_equal(lazy.values, t.numpy())


def test_a_tensor_written_after_its_extremes_keeps_its_shape_alone():
    """The extremes were true when read; the heatmap asked after a write shows nothing later."""
    w = torch.nn.Parameter(torch.randn(30, 30))
    lazy = Previews().of(w, sample=True)
    assert lazy.extremes() == tuple(float(v) for v in torch.aminmax(w.detach()))
    with torch.no_grad():
        w.mul_(2.0)
    assert lazy.stats is None and lazy.thumb is None and lazy.values is None and lazy.extremes() is None
    stale = Previews().of(w, sample=True)
    with torch.no_grad():
        w.add_(1.0)
    assert stale.extremes() is None and stale.stats is None   # written before its extremes were read


def test_an_animation_previews_each_gradient_as_torch_hands_it_over():
    """animate() shows every value, so it reads each gradient inside torch's hook (none is held for
    later), each once: the gradient a node sends is the Preview the next node receives. What it shows
    is what a lazy recording shows."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(50, 40)
    x = torch.randn(8, 50)
    anim = gradviz.animate(torch.tanh(lin(x)).sum(), model=lin)
    lazy = record_torch(torch.tanh(lin(x)).sum(), model=lin).run()
    shown = [(s.grad_in, [f.grad for f in s.flows]) for s in anim.trace.steps]
    assert not any(isinstance(g, LazyPreview) for grad_in, sent in shown for g in (*grad_in, *sent))
    assert any(np.prod(g.shape) > 64 and g.thumb is not None for _, sent in shown for g in sent)
    assert all(isinstance(f.grad, LazyPreview) for s in lazy.steps for f in s.flows)   # record() stays lazy
    for (grad_in, sent), step in zip(shown, lazy.steps):
        for a, b in zip((*grad_in, *sent), (*step.grad_in, *[f.grad for f in step.flows])):
            _same(a, b)
    received = {id(g) for grad_in, _ in shown for g in grad_in if g is not None}
    assert all(id(g) in received for _, sent in shown for g in sent)   # one Preview per gradient


def test_a_gradient_taken_again_after_a_write_is_previewed_again():
    """Taken holds no tensor: the version counter tells a gradient written in place (torch's engine
    adds into a gradient it alone holds), the weak reference a new tensor that took a dead one's id."""
    taken = Taken()
    t = torch.randn(30, 30)
    first = taken.of(t)
    assert taken.of(t) is first
    t.add_(1.0)
    again = taken.of(t)
    assert again is not first
    _same(again, preview(t))
    del t, first, again
    u = torch.randn(30, 30)   # may take the freed tensor's id
    _same(taken.of(u), preview(u))

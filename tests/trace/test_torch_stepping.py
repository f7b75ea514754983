"""record_torch: torch's own backward paused between nodes. Each step runs one node of torch's
engine on a worker thread; .grad read between steps is torch's partly accumulated gradient;
closing, resetting or dropping a recording leaves no thread, no hook and no changed .grad."""
import gc
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradviz.torch_bridge import record_torch, record_torch_backward  # noqa: E402

pytestmark = pytest.mark.torch


def shared_weight():
    """w is read twice (torch sums its two parts before writing .grad once); v is written later."""
    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    x = torch.randn(2, 3)
    h = torch.tanh(x @ w)
    loss = (h @ w + v).pow(2).sum()
    return w, loss


def registered(handles) -> int:
    """How many of the hooks behind torch's RemovableHandles are still registered on their nodes."""
    return sum(h.id in h.hooks_dict_ref() for h in handles if h.hooks_dict_ref() is not None)


def plain_grad(loss, w):
    return torch.autograd.grad(loss, w, retain_graph=True)[0]


def test_steps_are_torch_nodes_in_torch_order_and_grad_is_partial_halfway():
    w, loss = shared_weight()
    whole = record_torch_backward(loss)
    threads = threading.active_count()
    rec = record_torch(loss)
    first = rec.upcoming()
    assert first == whole.steps[0].node and threading.active_count() == threads + 1
    assert w.grad is None
    w_id, v_id = [n.id for n in rec.trace.nodes if n.kind == "leaf"]   # in creation order
    grads_seen = []
    while not rec.finished:
        node = rec.upcoming()
        step = rec.step()
        assert step.node == node
        if step.accumulations:
            grads_seen.append((None if w.grad is None else w.grad.clone(), rec.grads_now()))
    assert [s.node for s in rec.trace.steps] == [s.node for s in whole.steps]
    # halfway torch has written one leaf's .grad and not yet the other's
    (w_then, now_then), (w_end, now_end) = grads_seen
    assert w_then is None and now_then[w_id] is None and now_then[v_id] is not None
    assert torch.allclose(w_end, plain_grad(loss, w))
    assert np.allclose(now_end[w_id].values, w_end.numpy())
    rec.close()
    assert w.grad is None and threading.active_count() == threads


def test_a_step_is_one_node_and_grad_is_torchs_then():
    w, loss = shared_weight()
    rec = record_torch(loss)
    w_id = rec.trace.nodes[0].id
    while True:
        before = None if w.grad is None else w.grad.clone()
        step = rec.step()
        if step is None:
            break
        now = rec.grads_now()[w_id]
        assert (now is None) == (w.grad is None)
        if now is not None:
            assert np.allclose(now.values, w.grad.numpy())
        if rec.trace.node(step.node).kind != "accumulate" or not any(a.node == w_id for a in step.accumulations):
            assert (before is None and w.grad is None) or torch.equal(before, w.grad)   # nothing written to w
    rec.close()


def test_close_halfway_leaves_no_thread_no_hook_and_the_plain_gradient():
    w, loss = shared_weight()
    expected = plain_grad(loss, w)
    threads = threading.active_count()
    rec = record_torch(loss)
    for _ in range(3):
        rec.step()
    handles = list(rec._session.hooks.handles)
    assert threading.active_count() == threads + 1 and registered(handles) == len(handles) > 0
    rec.close()
    assert threading.active_count() == threads and registered(handles) == 0
    assert w.grad is None and rec.step() is None and rec.upcoming() is None
    loss.backward(retain_graph=True)
    assert torch.allclose(w.grad, expected)


def test_an_abandoned_recording_is_cleaned_up_by_the_collector():
    w, loss = shared_weight()
    expected = plain_grad(loss, w)
    threads = threading.active_count()
    rec = record_torch(loss)
    rec.step()
    rec.step()
    handles = list(rec._session.hooks.handles)
    del rec
    gc.collect()
    assert threading.active_count() == threads and registered(handles) == 0
    assert w.grad is None
    loss.backward()
    assert torch.allclose(w.grad, expected)


def test_reset_runs_a_fresh_backward_from_the_same_start():
    w, loss = shared_weight()
    with record_torch(loss) as rec:
        order = [rec.step().node for _ in range(4)]
        rec.reset()
        assert w.grad is None and rec.trace.steps == [] and not rec.finished
        assert all(n.grad is None for n in rec.trace.nodes if n.kind == "leaf")
        assert [rec.step().node for _ in range(4)] == order
        trace = rec.run()
    assert rec.finished and w.grad is None
    assert np.allclose(trace.nodes[0].grad.values, plain_grad(loss, w).numpy())


def test_write_grads_leaves_what_torch_wrote_and_the_existing_grad_is_added_to():
    w, loss = shared_weight()
    expected = plain_grad(loss, w)
    w.grad = torch.ones(3, 3)
    record_torch(loss, write_grads=True).run()
    assert torch.allclose(w.grad, expected + 1)
    w.grad = torch.ones(3, 3)
    record_torch(loss).run()
    assert torch.equal(w.grad, torch.ones(3, 3))


def test_a_freed_graph_raises_torchs_error_in_the_callers_thread():
    w, loss = shared_weight()
    loss.backward()
    threads = threading.active_count()
    rec = record_torch(loss)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        while rec.step() is not None:
            pass
    assert threading.active_count() == threads and rec.finished
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        record_torch_backward(loss)


def test_a_tensor_without_a_graph_gets_torchs_message():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        record_torch(torch.ones(2))


def test_retain_graph_false_frees_the_graph_as_backward_does():
    w, loss = shared_weight()
    record_torch(loss, retain_graph=False).run()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_names_and_clusters_come_from_the_model_and_the_callers_variables():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    loss = torch.nn.functional.cross_entropy(model(torch.randn(5, 3)), torch.tensor([0, 1, 0, 1, 1]))
    trace = record_torch(loss, model=model).run()
    leaves = [n.name for n in trace.nodes if n.kind == "leaf"]
    # named_parameters()'s names, indexed as the Sequential is ("2.bias + x W" would read 2 × bias)
    assert leaves == ["[0].weight", "[0].bias", "[2].weight", "[2].bias"]
    scopes = {n.name: n.scope for n in trace.nodes if n.kind == "op"}
    assert scopes["AddmmBackward0"] == ("Sequential", "2 (Linear)")   # the last Linear's, by dict order
    assert [n.scope for n in trace.nodes if n.name == "TBackward0"] == [("Sequential", "0 (Linear)"),
                                                                         ("Sequential", "2 (Linear)")]
    assert scopes["ReluBackward0"] == ("Sequential", "1 (ReLU)")   # the Sequential's next child makes it
    assert scopes["NllLossBackward0"] == ()              # the loss is computed outside it
    caller = {"net": model, "loss": loss}
    named = record_torch(loss, caller=caller).run()   # after the variable that holds the model
    assert [n.name for n in named.nodes if n.kind == "leaf"] == ["net.0.weight", "net.0.bias", "net.2.weight",
                                                                 "net.2.bias"]
    assert named.node(named.roots[0]).name == "loss"


def test_local_jacobians_are_read_from_torchs_nodes_as_gradviz_reads_its_own():
    import gradviz as gv
    from gradviz.tracing import record_backward

    def program(T, a, b):
        return (T.tanh(a @ b).softmax(1) * a.sum(1, keepdim=True)).sum()

    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 3)), rng.standard_normal((3, 2))]
    t = record_torch(program(torch, *[torch.tensor(x, requires_grad=True) for x in arrays]), jacobians=True).run()
    g = record_backward([program(gv, *[gv.tensor(x, requires_grad=True) for x in arrays])], jacobians=True)
    assert [s.node for s in t.steps] == [s.node for s in g.steps]
    shown = 0
    for ts, gs in zip(t.steps, g.steps):
        assert (ts.jacobians is None) == (gs.jacobians is None or all(j is None for j in gs.jacobians)), ts.node
        for tj, gj in zip(ts.jacobians or (), gs.jacobians or ()):
            assert (tj is None) == (gj is None)
            if tj is not None:
                assert np.allclose(tj, gj), ts.node
                shown += 1
    assert shown >= 6

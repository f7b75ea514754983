"""The Stepper's panel stays true across Reset: every claim of every frame of a first run, of a
run after Reset (also from halfway), and of runs over .grad that was zeroed, set to None or kept
(accumulating) is checked against what the engine actually did in that run."""
import re

import numpy as np
import pytest

import gradviz as torch
from tests.player.test_panel_truth import check_writes, grids, plain

pytest.importorskip("anywidget")

TOL = dict(rtol=6e-4, atol=1e-6)     # the panel prints 4 significant digits


def program():
    """z1 fans out to three consumers (a running sum of three terms), z2 to one."""
    z1 = torch.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    z2 = torch.tensor([[0.5, 2.0], [1.0, -1.0]], requires_grad=True)
    loss = ((z1 * z2 + z1) * z1).sum()
    return z1, z2, loss


def live(z1, z2) -> dict:
    return {k: None if t.grad is None else t.grad.numpy().copy() for k, t in (("z1", z1), ("z2", z2))}


def same(grads: dict, other: dict) -> bool:
    return grads.keys() == other.keys() and all(
        (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
        for a, b in ((grads[k], other[k]) for k in grads))


def check_running_sums(s, before: dict, after: dict):
    """Each running sum shows exactly the gradients that reached its receiver so far in THIS run (the
    engine's flows, recorded since the last Reset), and a leaf's finished sum is what AccumulateGrad
    added to its .grad."""
    graph = s.builder.graph
    flows_so_far: dict = {}
    finished = {}
    for f in s.recorded:
        step = s.trace.steps[f.step]
        for eid, grad, _ in step.flows:
            flows_so_far.setdefault(graph.edges[eid].src, []).append(np.asarray(grad.values, dtype=np.float64))
        # a running-sum row follows the VJP row of the edge whose receiver it sums for
        for m in re.finditer(r'<tr data-edge="(e\d+)">', f.text):
            rest = f.text[m.end():]
            nxt = re.search(r'<tr data-edge=', rest)
            rest = rest[:nxt.start()] if nxt else rest
            if '<tr class="gv-running">' not in rest:
                continue
            row = rest[rest.index('<tr class="gv-running">'):]
            sums, note = row[:row.index("gv-note")], plain(row[row.index("gv-note"):])
            shown = grids(sums)
            got = flows_so_far[graph.edges[m.group(1)].src]
            terms = shown[1:] if len(shown) > 1 else shown   # the total first
            assert len(terms) == len(got), plain(sums)
            for t, g in zip(terms, got):
                np.testing.assert_allclose(t.reshape(g.shape), g, **TOL)
            if len(shown) > 1:
                np.testing.assert_allclose(shown[0].reshape(got[0].shape), sum(got), **TOL)
            if "all its consumers have now sent gradient" in note:
                finished[graph.edges[m.group(1)].src] = sum(got)
    for receiver, total in finished.items():
        leaf = graph.leaf_of(receiver)
        if leaf is not None:
            was = before[leaf.name]
            np.testing.assert_allclose(total, after[leaf.name] - (0 if was is None else was), **TOL)
    assert finished, "the fan-out program shows a finished running sum"


def check_now(s, z1, z2):
    """'.grad right now' is the live .grad, never a value from an earlier run; each leaf once, by its
    own name (z1 fans out to three consumers and is still one row)."""
    now = plain(s.now)
    assert now.count(".grad = ") == len(live(z1, z2)), now
    for name, value in live(z1, z2).items():
        want = "None" if value is None else re.sub(r"\s+", " ", str(np.round(value, 4).tolist()))
        assert f"{name}.grad = {want}" in now and now.count(f"{name}.grad = ") == 1, (name, now)


def run_and_check(s, z1, z2, before: dict):
    """Step to the end one Next at a time, checking the live part at each step, then every frame."""
    assert same(live(z1, z2), before)
    check_now(s, z1, z2)
    while not s.finished:
        s.next()
        check_now(s, z1, z2)
    after = live(z1, z2)
    check_writes(s.trace, s.recorded, before, after)
    check_running_sums(s, before, after)
    seeds = [plain(f.text) for f in s.recorded if "Backward starts here" in plain(f.text)]
    assert len(seeds) == 1 and "seeds" in seeds[0] and "you passed" not in seeds[0]
    return after


def test_reset_and_rerun_over_grad_that_was_none():
    z1, z2, loss = program()
    s = torch.step(loss, names={"z1": z1, "z2": z2, "loss": loss})
    fresh = {"z1": None, "z2": None}
    first = run_and_check(s, z1, z2, fresh)
    s.reset()
    assert z1.grad is None and z2.grad is None and len(s.recorded) == 0
    second = run_and_check(s, z1, z2, fresh)        # "was None" again, no term of the first run
    for k in first:
        np.testing.assert_allclose(second[k], first[k])


def test_reset_halfway_then_rerun():
    z1, z2, loss = program()
    s = torch.step(loss, names={"z1": z1, "z2": z2, "loss": loss})
    while z1.grad is None:                           # up to z1's AccumulateGrad: it has written
        s.next()
    s.reset()
    assert z1.grad is None
    run_and_check(s, z1, z2, {"z1": None, "z2": None})


def test_reset_and_rerun_accumulating_onto_kept_grads():
    z1, z2, loss = program()
    z1.grad = torch.tensor([[10.0, 10.0], [10.0, 10.0]])
    z2.grad = torch.tensor([[-1.0, 0.0], [0.0, 1.0]])
    kept = live(z1, z2)
    s = torch.step(loss, names={"z1": z1, "z2": z2, "loss": loss})
    first = run_and_check(s, z1, z2, kept)           # "already there": the first term is the kept .grad
    s.reset()
    np.testing.assert_allclose(z1.grad.numpy(), kept["z1"])
    second = run_and_check(s, z1, z2, kept)          # the first term is the kept .grad, not the first run's total
    for k in first:
        np.testing.assert_allclose(second[k], first[k])


@pytest.mark.parametrize("set_to_none", [True, False])
def test_a_second_stepper_after_zero_grad(set_to_none):
    z1, z2, loss = program()
    first = torch.step(loss, names={"z1": z1, "z2": z2, "loss": loss})
    run_and_check(first, z1, z2, {"z1": None, "z2": None})
    torch.optim.SGD([z1, z2], lr=0.1).zero_grad(set_to_none=set_to_none)
    zeroed = live(z1, z2)
    assert (zeroed["z1"] is None) == set_to_none
    s = torch.step(loss, names={"z1": z1, "z2": z2, "loss": loss})    # the same retained graph, run again
    after = run_and_check(s, z1, z2, zeroed)         # zeros are "already there"; None is "was None"
    s.reset()
    assert same(live(z1, z2), zeroed)
    again = run_and_check(s, z1, z2, zeroed)
    for k in after:
        np.testing.assert_allclose(again[k], after[k])

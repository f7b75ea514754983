"""nn.CTCLoss and F.ctc_loss against torch: per-sample losses and gradients from torch's CPU kernel's
recursions (padded and concatenated targets, unequal lengths, repeated labels, impossible alignments,
zero_infinity, unbatched input), the reductions and grad_fn chains torch records around its
CtcLossBackward0 node, its checks in its words, and a gradient that cannot be differentiated again."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]

SETUP = """
torch.manual_seed(0)
T, C, N, S = 12, 5, 4, 4
lp = torch.randn(T, N, C, dtype=torch.float64).log_softmax(2).detach().requires_grad_()
targets = torch.tensor([[1, 1, 2, 3], [4, 4, 4, 0], [2, 3, 2, 1], [3, 0, 0, 0]])
il = torch.tensor([12, 10, 7, 1])
tl = torch.tensor([4, 3, 4, 1])
"""


def _run(t, dtype, reduction, zero_infinity, concatenated, seed):
    rng = np.random.default_rng(seed)
    T, N, C = 15, 5, 6
    x = rng.standard_normal((T, N, C))
    target_lengths = [int(n) for n in rng.integers(0, 6, N)]
    input_lengths = [int(n) for n in rng.integers(0, T + 1, N)]
    labels = rng.integers(1, C, (N, 6))
    labels[:, 1] = labels[:, 0]   # repeated labels need a blank between them
    lp = t.tensor(x, dtype=dtype).log_softmax(2).detach().requires_grad_()
    tg = t.tensor(np.concatenate([labels[b, :n] for b, n in enumerate(target_lengths)]) if concatenated else labels)
    loss = t.nn.functional.ctc_loss(lp, tg, t.tensor(input_lengths), t.tensor(target_lengths),
                                    reduction=reduction, zero_infinity=zero_infinity)
    losses = t.nn.functional.ctc_loss(lp, tg, t.tensor(input_lengths), t.tensor(target_lengths), reduction="none")
    (loss * 1.5).sum().backward()
    return loss.detach().numpy(), losses.detach().numpy(), lp.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("concatenated", [False, True])
def test_losses_and_gradients_match_torch(dtype, reduction, zero_infinity, concatenated):
    for seed in range(3):
        ours = _run(gradviz, getattr(gradviz, dtype), reduction, zero_infinity, concatenated, seed)
        theirs = _run(real_torch, getattr(real_torch, dtype), reduction, zero_infinity, concatenated, seed)
        rtol = 1e-5 if dtype == "float32" else 1e-12
        for a, b in zip(ours, theirs):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)


def test_graphs_reprs_and_unbatched_input_match_torch():
    same_output(SETUP, """
    for red in ["mean", "sum", "none"]:
        l = torch.nn.functional.ctc_loss(lp, targets, il, tl, reduction=red)
        print(red, l, l.grad_fn, l.grad_fn.next_functions)
    l = torch.nn.functional.ctc_loss(lp, targets, tuple(il.tolist()), list(tl.tolist()), zero_infinity=True)
    print(l, l.grad_fn.next_functions[0][0].next_functions)
    node = l.grad_fn.next_functions[0][0].next_functions[0][0]
    print(node.next_functions[1][0].next_functions, node.next_functions[1][0]._saved_input_lengths,
          node.next_functions[1][0]._saved_target_lengths, node.next_functions[1][0]._saved_blank)
    m = torch.nn.CTCLoss(blank=0, zero_infinity=True)
    print(m, torch.nn.CTCLoss(blank=4, reduction="sum"), m.blank, m.zero_infinity, m.reduction)
    u = torch.nn.functional.ctc_loss(lp[:, 0], targets[0], torch.tensor(12), torch.tensor(4), reduction="none")
    print(u, u.grad_fn, u.grad_fn.next_functions, u.grad_fn.next_functions[0][0].next_functions)
    print(torch.nn.functional.ctc_loss(lp, targets, torch.tensor([0, 10, 7, 1]), torch.tensor([0, 3, 4, 1]),
                                       reduction="none"))
    print(torch.nn.functional.ctc_loss(lp.float(), targets.float(), il.int(), tl, blank=0))
    g, = torch.autograd.grad(m(lp, targets, il, tl), lp, create_graph=True)
    print(g.grad_fn)
    try:
        g.sum().backward()
    except RuntimeError as e:
        print(e)
    """)


def test_errors_match_torch():
    same_output(SETUP, """
    F = torch.nn.functional
    for args in [(lp, targets, il, tl, 5), (lp, targets, il[:2], tl, 0), (lp, targets, il, tl[:2], 0),
                 (lp, targets, torch.tensor([13, 6, 6, 1]), tl, 0), (lp, targets, il, torch.tensor([5, 1, 1, 1]), 0),
                 (lp, targets, il.float(), tl, 0), (lp, targets, il, tl > 0, 0), (lp, targets[:2], il, tl, 0),
                 (lp, targets, torch.tensor([-1, 6, 6, 1]), tl, 0), (lp, targets, il, torch.tensor([-1, 1, 1, 1]), 0),
                 (lp, targets.flatten()[:5], il, tl, 0), (lp, targets, il, tl, -1), (lp[None], targets, il, tl, 0),
                 (lp, targets[None], il, tl, 0), (lp.long(), targets, il, tl, 0)]:
        try:
            print(F.ctc_loss(*args[:4], blank=args[4]))
        except (RuntimeError, NotImplementedError) as e:
            print(type(e).__name__, e)
    try:
        F.ctc_loss(lp, targets, il, tl, reduction="avg")
    except ValueError as e:
        print(e)
    """)


def test_gradient_is_torchs_which_presumes_log_softmax_before_it():
    """torch's CTC gradient adds exp(log_probs)·ḡ, the part a log_softmax before it cancels: gradcheck
    fails on raw log-probabilities and passes through log_softmax, in both libraries."""
    same_output("""
    lp = torch.randn(6, 2, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3)).requires_grad_()
    targets = torch.tensor([[1, 2, 2], [3, 1, 0]])
    def loss(x):
        return torch.nn.functional.ctc_loss(x, targets, (6, 5), (3, 2), reduction="sum")
    print(torch.autograd.gradcheck(loss, (lp.log_softmax(2).detach().requires_grad_(),), raise_exception=False))
    print(torch.autograd.gradcheck(lambda x: loss(x.log_softmax(2)), (lp,)))
    """)


def test_top_level_ctc_loss_takes_an_integer_reduction_as_torchs():
    same_output(SETUP, """
    print(torch.ctc_loss(lp, targets, il, tl), torch.ctc_loss(lp, targets, tuple(il.tolist()), tuple(tl.tolist()), 0, 1),
          torch.ctc_loss(lp, targets, il, tl, 0, 2, True), torch.ctc_loss(lp, targets, il, tl, 0, 7))
    try:
        torch.ctc_loss(lp, targets, il, tl, 0, "sum")
    except TypeError as e:
        print(str(e).splitlines()[0])
    """)


@pytest.mark.parametrize("label", [7, -1])
def test_a_label_outside_the_classes_is_refused_not_read_past_the_end(label):
    """torch's CPU kernel reads such a label's log-probability past the end of log_probs (a number that
    means nothing); gradviz refuses it, in nll_loss's words, and only where a target length reaches it."""
    lp = gradviz.randn(6, 1, 4).log_softmax(2)
    for targets in (gradviz.tensor([[1, label, 2]]), gradviz.tensor([1, label, 2])):
        with pytest.raises(IndexError, match=f"^Target {label} is out of bounds.$"):
            gradviz.nn.functional.ctc_loss(lp, targets, gradviz.tensor([6]), gradviz.tensor([3]))
    past = gradviz.nn.functional.ctc_loss(lp, gradviz.tensor([[1, 2, label]]), gradviz.tensor([6]), gradviz.tensor([2]))
    assert np.isfinite(past.item())   # the padding after the target length is never read

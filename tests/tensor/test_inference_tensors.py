"""Inference tensors as torch's: a tensor made inside inference_mode reports is_inference(), is
refused an in-place write or requires_grad outside it, and is refused when a recorded node would
save it for backward (torch's words); a view of a normal tensor made inside stays normal. gradviz
refuses before writing anything, where torch's kernel has already written when it raises."""
import sys
import threading

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def outcome(fn):
    try:
        result = fn()
    except RuntimeError as error:
        return str(error)
    return result.tolist() if hasattr(result, "tolist") else result


def flags(torch) -> list:
    x = torch.ones(3)
    p = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        made = [x[0:2], x.view(3), x * 2, p * 2, torch.zeros(2), torch.tensor([1.0]), torch.Tensor(2)]
        seen = [t.is_inference() for t in made] + [(p * 2).requires_grad, (x * 2)[0:1].is_inference()]
        x.add_(1)                                   # a normal tensor may be written inside
        with torch.inference_mode(False):
            seen.append(torch.ones(1).is_inference())
    seen += [x.is_inference(), (made[2] * 1).is_inference(), made[2].clone().is_inference(), x.tolist()]
    return seen


def test_which_tensors_are_inference_tensors_matches_torch():
    assert flags(gradviz) == flags(real_torch)


def refusals(torch) -> list:
    p = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        y = torch.ones(3) * 2
    found = [outcome(fn) for fn in (lambda: y.requires_grad_(), lambda: (y * p).sum(),
                                    lambda: p.exp() * y)]
    found.append((y + p).grad_fn.name())             # AddBackward0 saves neither input: allowed
    with torch.inference_mode():
        y.add_(1)                                   # inside, an inference tensor may be written
    found.append(y.tolist())
    return found


def test_refusals_match_torch():
    assert refusals(gradviz) == refusals(real_torch)


@pytest.mark.parametrize("write", [
    lambda y, x: y.zero_(), lambda y, x: y.copy_(x), lambda y, x: y.mul_(2), lambda y, x: y.fill_(1),
    lambda y, x: y.clamp_(0, 1), lambda y, x: y.__setitem__(0, 5.0), lambda y, x: y.sub_(x, alpha=2)])
def test_writes_outside_are_refused_in_torchs_words_before_anything_is_written(write):
    with real_torch.inference_mode():
        ty = real_torch.ones(3) * 2
    with pytest.raises(RuntimeError) as expected:
        write(ty, real_torch.ones(3))
    with gradviz.inference_mode():
        y = gradviz.ones(3) * 2
    with pytest.raises(RuntimeError) as error:
        write(y, gradviz.ones(3))
    assert str(error.value) == str(expected.value)
    assert y.tolist() == [2.0, 2.0, 2.0]             # torch's kernel has written by then; gradviz has not


def test_a_decorated_model_call_gives_inference_outputs():
    lin = gradviz.nn.Linear(2, 1)

    @gradviz.inference_mode()
    def predict(x):
        return lin(x)
    out = predict(gradviz.ones(1, 2))
    assert out.is_inference() and not out.requires_grad
    assert not lin.weight.is_inference()


def test_inference_mode_in_one_thread_makes_no_inference_tensors_in_another():
    entered, checked = threading.Event(), threading.Event()

    def infer():
        with gradviz.inference_mode():
            entered.set()
            checked.wait()

    thread = threading.Thread(target=infer)
    thread.start()
    entered.wait()
    made_here = gradviz.ones(2) * 2
    checked.set()
    thread.join()
    assert not made_here.is_inference()
    assert sys.modules["gradviz.tensor"].inference_contexts == 0   # every context closed is counted out


def aliases(torch) -> list:
    """detach() and .data of an inference tensor are inference tensors torch lets one write outside
    the mode (they have their own version counter); views of it, or a write through a view of a
    detached one, are refused; made inside, the detached copy of a normal tensor is normal."""
    x = torch.ones(3)
    with torch.inference_mode():
        a = torch.ones(3)
        seen = [a.detach().is_inference(), x.detach().is_inference(), x.data.is_inference()]
    d = a.detach()
    seen += [d.is_inference(), a.data.is_inference(), a.view(3).is_inference(), a[1:].is_inference(),
             d[:1].is_inference(), a.clone().is_inference(), (a * 2).is_inference()]
    writes = [lambda: d.add_(1), lambda: d.zero_(), lambda: d.fill_(2.0), lambda: d.copy_(torch.ones(3)),
              lambda: a.data.mul_(3), lambda: d.view(3).add_(1), lambda: d[:2].add_(1), lambda: a.add_(1),
              lambda: d.__setitem__(0, 5.0), lambda: d.__setitem__(None, 5.0), lambda: d.__setitem__(slice(None), 4.0),
              lambda: d.__setitem__(..., 6.0), lambda: d.__setitem__([0, 2], 7.0), lambda: d.requires_grad_(),
              lambda: torch.ones(3, requires_grad=True) * d]
    return seen + [outcome(w) for w in writes] + [d.tolist()]


def test_detached_inference_tensors_match_torch():
    assert aliases(gradviz) == aliases(real_torch)

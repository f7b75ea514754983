"""torch.autograd.grad's further arguments, against torch: the deprecated only_inputs (WGAN-GP's
gradient penalty passes it) with its FutureWarning, inputs given as a dict, and is_grads_batched
(one backward per row of the grad_outputs, torch's shape check and words)."""
import pytest

from tests.support.parity import needs_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]


def test_only_inputs_dict_inputs_and_batched_grads_match_torch():
    same_output("""
    x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    y = x ** 2
    for g in [torch.ones(2, 2), torch.ones(4), torch.ones(2, 3, 1)]:
        try:
            torch.autograd.grad(y, x, g, is_grads_batched=True, retain_graph=True)
        except RuntimeError as e:
            print(e)
    print(torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True, retain_graph=True))
    r = torch.autograd.grad([y, x * 3], x, [torch.eye(3), torch.ones(3, 3)], is_grads_batched=True,
                            retain_graph=True, create_graph=True)
    print(r[0].detach(), r[0].requires_grad)   # torch's vmap records AddBackward0 last, gradviz a stack
    z = torch.randn(2, requires_grad=True)
    print(torch.autograd.grad(y, [x, z], torch.eye(3), is_grads_batched=True, retain_graph=True, allow_unused=True))
    print(torch.autograd.grad(y, {"a": x, "b": x}, torch.ones(3), retain_graph=True))
    print(torch.autograd.grad(y.sum(), x, torch.ones(4), is_grads_batched=True))
    try:
        torch.autograd.grad(y.sum(), x)
    except RuntimeError as e:
        print(e)
    print(torch.autograd.grad((x * 2).sum(), x, only_inputs=False))
    interpolates = torch.tensor([[0.5, 1.5]], requires_grad=True)
    d = (interpolates ** 3).sum(1, keepdim=True)
    print(torch.autograd.grad(outputs=d, inputs=interpolates, grad_outputs=torch.ones(1, 1), create_graph=True,
                              retain_graph=True, only_inputs=True)[0])
    """)


def test_gradient_edges_and_increment_version_match_torch():
    same_output("""
    from_graph = torch.autograd.graph
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.exp()
    e = from_graph.get_gradient_edge(y)
    print(type(e).__name__, e.node.name(), e.output_nr, isinstance(e, tuple))
    z = y * 2
    print(torch.autograd.grad(z.sum(), e, retain_graph=True), torch.autograd.grad(z.sum(), [e, x]))
    print(from_graph.get_gradient_edge(x).node.name())
    try:
        from_graph.get_gradient_edge(torch.ones(1))
    except RuntimeError as err:
        print(err)
    a = torch.ones(2, requires_grad=True) * 1
    b = a.sin()
    from_graph.increment_version(a)
    print(a._version)
    try:
        b.sum().backward()
    except RuntimeError as err:
        print(err)
    """)

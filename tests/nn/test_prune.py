"""torch.nn.utils.prune against torch, as the Pruning Tutorial runs it: the same entries pruned from the
same seed (random, L1, Ln-structured, global), the `_orig`/`_mask` names and the forward pre-hook found
in `module._forward_pre_hooks`, iterative pruning combined by a PruningContainer, a custom method,
gradients reaching `<name>_orig`, `remove`, and torch's errors."""
from __future__ import annotations

import gradviz
from tests.support.parity import needs_torch, same_output

pytestmark = needs_torch

LENET = """
nn, F = torch.nn, torch.nn.functional
prune = __import__(torch.__name__ + ".nn.utils.prune", fromlist=["prune"])   # torch imports it on demand
torch.manual_seed(0)
class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3); self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120); self.fc2 = nn.Linear(120, 84); self.fc3 = nn.Linear(84, 10)
    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2)); x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
model = LeNet()
def names(hooks): return [type(h).__name__ for h in hooks]
"""


def test_the_pruning_tutorial_prunes_what_torch_prunes():
    out = same_output(LENET, """
    module = model.conv1
    prune.random_unstructured(module, name="weight", amount=0.3)
    print([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()], module.weight[0])
    print(names(module._forward_pre_hooks.values()), list(module._forward_pre_hooks)[0] >= 0)
    prune.l1_unstructured(module, name="bias", amount=3)
    print(module.bias, module.bias_mask)
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    hook = [h for h in module._forward_pre_hooks.values() if h._tensor_name == "weight"][0]
    print(type(hook).__name__, names(hook), module.weight_mask.sum((1, 2, 3)))
    prune.remove(module, 'weight'); print([n for n, _ in module.named_parameters()], hasattr(module, 'weight_orig'),
                                          hasattr(module, 'weight_mask'))
    parameters_to_prune = ((model.conv2, 'weight'), (model.fc1, 'weight'), (model.fc2, 'weight'), (model.fc3, 'weight'))
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
    for m, _ in parameters_to_prune:
        print("Sparsity: {:.2f}%".format(100. * float(torch.sum(m.weight == 0)) / float(m.weight.nelement())))
    print(list(model.state_dict().keys()), prune.is_pruned(model), prune.is_pruned(nn.Linear(2, 2)))
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear):
            prune.l1_unstructured(m, name='weight', amount=0.4)
    print(names(model.fc1._forward_pre_hooks.values()), names(model.fc1._forward_pre_hooks[
        list(model.fc1._forward_pre_hooks)[0]]), float(torch.sum(model.fc1.weight == 0)))
    class FooBarPruningMethod(prune.BasePruningMethod):
        PRUNING_TYPE = 'unstructured'
        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask
    FooBarPruningMethod.apply(model.fc3, 'bias')
    out = model(torch.randn(2, 1, 28, 28)); out.sum().backward()
    print(model.fc3.bias_mask, model.fc3.bias_orig.grad, model.fc3.bias.grad_fn.name(),
          model.conv2.weight_orig.grad.abs().sum())
    """)
    assert "Sparsity: " in out and "PruningContainer" in out


def test_the_other_methods_and_torchs_errors():
    same_output(LENET, """
    m = nn.Linear(4, 3)
    prune.random_structured(m, 'weight', amount=1, dim=0); print(m.weight_mask)
    prune.ln_structured(m, 'weight', amount=0.34, n=1, dim=1); print(m.weight_mask)
    prune.custom_from_mask(m, 'bias', torch.tensor([1, 0, 1])); print(m.bias, names(m._forward_pre_hooks.values()))
    prune.identity(m, 'bias'); print(m.bias_mask)
    m2 = nn.Linear(3, 2)
    prune.l1_unstructured(m2, 'weight', amount=2, importance_scores=torch.arange(6.).view(2, 3)); print(m2.weight_mask)
    print(prune.L1Unstructured(0.5).prune(torch.tensor([0.1, -2.0, 0.3, 4.0])))
    for f in [lambda: prune.l1_unstructured(nn.Linear(2, 2), 'weight', amount=1.5),
              lambda: prune.l1_unstructured(nn.Linear(2, 2), 'weight', amount=-1),
              lambda: prune.l1_unstructured(nn.Linear(2, 2), 'weight', amount=5),
              lambda: prune.l1_unstructured(nn.Linear(2, 2), 'weight', amount='a'),
              lambda: prune.ln_structured(nn.Linear(2, 2), 'bias', amount=1, n=2, dim=0),
              lambda: prune.ln_structured(nn.Linear(2, 2), 'weight', amount=1, n=2, dim=3),
              lambda: prune.remove(nn.Linear(2, 2), 'weight'),
              lambda: prune.global_unstructured(3, pruning_method=prune.L1Unstructured, amount=1)]:
        try: f()
        except Exception as e: print(type(e).__name__, str(e).replace('gradviz', 'torch'))
    lin = nn.Linear(2, 2)
    try: prune.l1_unstructured(lin, 'weight', amount=9)
    except ValueError as e: print(e)
    print([n for n, _ in lin.named_parameters()], list(lin._buffers), hasattr(lin, 'weight_orig'))
    """)


def test_forward_hooks_are_kept_as_torch_keeps_them():
    """The hook objects themselves in _forward_pre_hooks/_forward_hooks, with_kwargs and always_call in
    torch's side tables, which a removed handle empties too."""
    m = gradviz.nn.Linear(2, 2)
    pre = m.register_forward_pre_hook(lambda mod, args, kwargs: None, with_kwargs=True)
    post = m.register_forward_hook(lambda mod, args, out: None, always_call=True)
    assert list(m._forward_pre_hooks.values())[0].__name__ == "<lambda>"
    assert list(m._forward_pre_hooks_with_kwargs) == [pre.id] and list(m._forward_hooks_always_called) == [post.id]
    m(gradviz.ones(1, 2))
    pre.remove(), post.remove()
    assert not m._forward_pre_hooks and not m._forward_pre_hooks_with_kwargs and not m._forward_hooks_always_called

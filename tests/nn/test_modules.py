"""The Module API against torch: hooks, traversal, buffers, state_dict, train/eval, zero_grad,
reprs, legacy loss arguments, gradient clipping and save/load. Most cases are programs that
print, run once with torch and once with gradviz; the printed text must be the same."""
import io

import numpy as np
import pytest

import gradviz

from tests.support.parity import needs_torch, real_torch as torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]


NET = """
import numpy as np
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 3)
        self.act = torch.nn.Tanh()
        self.fc2 = torch.nn.Linear(3, 2)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.register_buffer("scratch", torch.ones(2), persistent=False)
        with torch.no_grad():
            for i, p in enumerate(self.parameters()):
                p.copy_(torch.tensor(np.linspace(-0.5, 0.5, p.numel()).reshape(tuple(p.shape)) * (i + 1),
                                     dtype=torch.float32))

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))

net = Net().double()
x = torch.tensor(np.linspace(-2, 2, 8).reshape(2, 4), dtype=torch.float64)
"""


def test_forward_hooks_print_shapes_as_in_the_tutorial():
    out = same_output(NET, """
    def print_shapes(module, inputs, output):
        print(f"{type(module).__name__}: {[tuple(i.shape) for i in inputs]} -> {tuple(output.shape)}")
    handles = [m.register_forward_hook(print_shapes) for m in net.modules() if not list(m.children())]
    y = net(x)
    for h in handles:
        h.remove()
    net(x)
    print("removed")
    def double_input(module, args):
        return args[0] * 2
    def add_one(module, args, output):
        return output + 1
    with net.fc1.register_forward_pre_hook(double_input):
        h = net.register_forward_hook(add_one)
        print(net(x))
        h.remove()
    print(net(x))
    def kw_pre(module, args, kwargs):
        return (args[0] * 0,), kwargs
    h = net.register_forward_pre_hook(kw_pre, with_kwargs=True)
    print(net(x))
    h.remove()
    order = []
    net.register_forward_hook(lambda m, i, o: order.append("second"))
    net.register_forward_hook(lambda m, i, o: order.append("first"), prepend=True)
    net(x)
    print(order)
    """)
    assert "Linear: [(2, 4)] -> (2, 3)" in out and "Tanh: [(2, 3)] -> (2, 3)" in out


def test_full_backward_hooks_match_torch():
    same_output(NET, """
    seen = []
    def hook(module, grad_input, grad_output):
        seen.append(type(module).__name__)
        print(type(module).__name__, [None if g is None else g for g in grad_input],
              [g for g in grad_output])
    net.fc1.register_full_backward_hook(hook)
    net.act.register_full_backward_hook(hook)
    xr = x.clone().requires_grad_()
    y = net(xr)
    print(y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
    y.sum().backward()
    print(seen, xr.grad)
    # a hook may replace grad_input: scale what flows into fc2's input by 10
    net.fc2.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
    net.zero_grad()
    xr.grad = None
    net(xr).sum().backward()
    print(xr.grad, net.fc1.weight.grad)
    # a module whose input needs no gradient still reports grad_output (grad_input is (None,))
    net(x).pow(2).sum().backward()
    print(seen[-2:])
    """)


def test_traversal_apply_and_requires_grad():
    same_output(NET, """
    print([name for name, _ in net.named_modules()])
    print([type(m).__name__ for m in net.modules()])
    print([type(m).__name__ for m in net.children()], [n for n, _ in net.named_children()])
    print([name for name, _ in net.named_parameters()], [name for name, _ in net.named_buffers()])
    shared = torch.nn.Sequential(net.fc1, net.fc1, torch.nn.ReLU())
    print([name for name, _ in shared.named_modules()], len(list(shared.parameters())))
    print(list(shared.state_dict().keys()))
    def init(m):
        if isinstance(m, torch.nn.Linear):
            torch.nn.init.constant_(m.weight, 0.5)
            torch.nn.init.zeros_(m.bias)
            print("init", m)
    print(net.apply(init) is net, net.fc2.weight)
    print(net.requires_grad_(False) is net, [p.requires_grad for p in net.parameters()])
    net.requires_grad_()
    print([p.requires_grad for p in net.parameters()])
    print(net.training, net.eval() is net, net.training, net.fc1.training, net.train().fc2.training)
    try:
        net.train("yes")
    except ValueError as e:
        print(e)
    print(shared.get_submodule("0"), net.get_submodule(""), net.cpu() is net)
    for target in ("fc9", "fc1.weight"):
        try:
            net.get_submodule(target)
        except AttributeError as e:
            print(e)
    """)


def test_buffers_state_dict_and_load_state_dict():
    same_output(NET, """
    sd = net.state_dict()
    print(list(sd.keys()), type(sd).__name__)
    print(sd["fc1.bias"].requires_grad, net.state_dict(keep_vars=True)["fc1.bias"].requires_grad)
    other = Net().double()
    with torch.no_grad():
        for p in other.parameters():
            p.zero_()
    print(other.load_state_dict(sd))
    print(other(x))
    print(other.fc1.weight._version)
    bad = dict(sd)
    del bad["fc2.bias"]
    bad["fc3.weight"] = torch.zeros(1)
    bad["extra"] = torch.zeros(1)
    bad["fc1.weight"] = torch.zeros(3, 3)
    for strict in (True, False):
        try:
            print(other.load_state_dict(bad, strict=strict))
        except RuntimeError as e:
            print(e)
    print(other.load_state_dict({k: v for k, v in sd.items() if k != "steps"}, strict=False))
    net.steps += 1
    net.scratch = torch.zeros(2)
    print(net.state_dict()["steps"], net._buffers["scratch"])
    try:
        net.register_buffer("fc1", torch.zeros(1))
    except KeyError as e:
        print("KeyError", e)
    try:
        net.register_buffer("a.b", torch.zeros(1))
    except KeyError as e:
        print("KeyError", e)
    try:
        net.register_buffer("c", 3)
    except TypeError as e:
        print("TypeError", e)
    try:
        net.fc1.weight = torch.zeros(3, 4)
    except TypeError as e:
        print("TypeError", e)
    """)


def test_zero_grad_set_to_none():
    same_output(NET, """
    net(x).sum().backward()
    g = net.fc1.weight.grad
    net.zero_grad(set_to_none=False)
    print(net.fc1.weight.grad is g, g.abs().sum())
    net.zero_grad()
    print(net.fc1.weight.grad)
    """)


def test_reprs_match_torch():
    same_output("""
    nn = torch.nn
    for m in [nn.Linear(3, 2), nn.Linear(3, 2, bias=False), nn.ReLU(), nn.ReLU(inplace=True), nn.GELU(),
              nn.GELU(approximate="tanh"), nn.LeakyReLU(0.2), nn.Softmax(dim=1), nn.LogSoftmax(dim=-1),
              nn.Flatten(), nn.Flatten(0, 2), nn.Dropout(0.1), nn.MSELoss(), nn.CrossEntropyLoss(), nn.Identity(),
              nn.ELU(), nn.Hardtanh(), nn.Softplus(), nn.LayerNorm(4), nn.LayerNorm((2, 3), elementwise_affine=False),
              nn.Embedding(10, 3, padding_idx=0), nn.BatchNorm1d(4), nn.BatchNorm1d(4, bias=False), nn.BatchNorm2d(3), nn.Conv2d(1, 6, 5),
              nn.MaxPool2d(2, 2),
              nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())),
              nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU(), nn.Tanh()]),
              nn.ModuleList(), nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(1, 1)}),
              nn.ParameterList([nn.Parameter(torch.zeros(2, 3)), nn.Parameter(torch.zeros(1))])]:
        print(m)
    """)


def test_legacy_loss_arguments_warn_and_reduce_as_torch():
    same_output("""
    import numpy as np
    a = torch.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=torch.float32)
    b = torch.tensor(np.linspace(1, 0, 6).reshape(2, 3), dtype=torch.float32)
    t = torch.tensor([2, 0])
    for kwargs in (dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=True),
                   dict(size_average=False, reduce=False)):
        mse = torch.nn.MSELoss(**kwargs)
        print(mse.reduction, mse(a, b))
        print(torch.nn.L1Loss(**kwargs)(a, b), torch.nn.SmoothL1Loss(**kwargs)(a, b))
        print(torch.nn.CrossEntropyLoss(**kwargs)(a, t), torch.nn.NLLLoss(**kwargs)(a, t))
        print(torch.nn.BCEWithLogitsLoss(**kwargs)(a, b), torch.nn.KLDivLoss(**kwargs)(a, b).reduction
              if False else torch.nn.KLDivLoss(**kwargs).reduction)
    print(torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0])).state_dict())
    """)


def test_clip_grad_matches_torch():
    same_output("""
    import math
    import numpy as np
    for norm_type in (2.0, 1.0, 3.0, math.inf):
        ps = [torch.nn.Parameter(torch.zeros(3)), torch.nn.Parameter(torch.zeros(2, 2)),
              torch.nn.Parameter(torch.zeros(1))]
        ps[0].grad = torch.tensor([3.0, 4.0, 0.5])
        ps[1].grad = torch.tensor([[1.0, -2.0], [0.25, 7.0]])
        total = torch.nn.utils.clip_grad_norm_(ps, max_norm=1.5, norm_type=norm_type)
        print(total, ps[0].grad, ps[1].grad, ps[2].grad)
        print(torch.nn.utils.clip_grad_norm_(ps[0], 100.0), ps[0].grad)
    ps[1].grad = torch.tensor([[1.0, float("nan")], [0.0, 1.0]])
    try:
        torch.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    except RuntimeError as e:
        print(e)
    ps[1].grad = torch.tensor([[1.0, -2.0], [0.25, 7.0]])
    print(torch.nn.utils.clip_grad_value_(ps, 0.5), ps[1].grad)
    print(torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(torch.zeros(2))], 1.0))
    """)


def test_save_and_load_resume_training_exactly(tmp_path):
    rng = np.random.default_rng(1)
    x = gradviz.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = gradviz.tensor(rng.standard_normal((8, 2)).astype(np.float32))

    def build():
        gradviz.manual_seed(5)
        model = gradviz.nn.Sequential(gradviz.nn.Linear(4, 8), gradviz.nn.BatchNorm1d(8), gradviz.nn.ReLU(),
                                      gradviz.nn.Linear(8, 2))
        opt = gradviz.optim.AdamW(model.parameters(), lr=0.01)
        sched = gradviz.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        return model, opt, sched

    def step(model, opt, sched):
        opt.zero_grad()
        loss = gradviz.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()

    model, opt, sched = build()
    for _ in range(3):
        step(model, opt, sched)
    path = tmp_path / "checkpoint.pt"
    gradviz.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                  "epoch": 3, "note": "three steps", "shape": x.shape}, path)
    expected = [step(model, opt, sched) for _ in range(3)]

    checkpoint = gradviz.load(path)
    assert checkpoint["epoch"] == 3 and checkpoint["note"] == "three steps" and checkpoint["shape"] == (8, 4)
    model2, opt2, sched2 = build()
    print(model2.load_state_dict(checkpoint["model"]))
    opt2.load_state_dict(checkpoint["optimizer"])
    sched2.load_state_dict(checkpoint["scheduler"])
    assert [step(model2, opt2, sched2) for _ in range(3)] == expected
    for p, q in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_save_and_load_tensors_and_refuse_code():
    buffer = io.BytesIO()
    w = gradviz.nn.Parameter(gradviz.tensor([[1.0, 2.0]], dtype=gradviz.float64))
    t = gradviz.arange(6).reshape(2, 3)[:, 1]   # a non-contiguous view
    gradviz.save([w, t, w, gradviz.tensor(3.5), (1, None, True)], buffer)
    buffer.seek(0)
    w2, t2, w3, s, rest = gradviz.load(buffer)
    assert type(w2) is gradviz.nn.Parameter and w2.requires_grad and w2.dtype == gradviz.float64
    assert w2 is w3 and t2.tolist() == [1, 4] and t2.dtype == gradviz.int64 and s.shape == () and s.item() == 3.5
    assert rest == (1, None, True)
    buffer = io.BytesIO()
    gradviz.save(gradviz.nn.Linear(2, 1), buffer)
    buffer.seek(0)
    with pytest.raises(Exception, match="Weights only load failed"):
        gradviz.load(buffer)
    buffer.seek(0)
    assert isinstance(gradviz.load(buffer, weights_only=False), gradviz.nn.Linear)
    with pytest.raises(RuntimeError, match="not a file written by gradviz.save"):
        gradviz.load(io.BytesIO(b"PK\x03\x04 a zip"))


SEQUENTIAL = """
from collections import OrderedDict
import numpy as np
nn = torch.nn
def build():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2), nn.Tanh())
def show(m):
    print(m)
    print(list(m.state_dict()), [tuple(p.shape) for p in m.parameters()], len(m), [type(c).__name__ for c in m])
    print([n for n, _ in m.named_modules()], [n for n, _ in m.named_children()])
def attempt(f):
    try:
        print("ok", type(f()).__name__)
    except Exception as e:
        print(type(e).__name__, e)
x = torch.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=torch.float32)
"""


def test_sequential_indexing_and_slicing_as_torch():
    same_output(SEQUENTIAL, """
    m = build()
    print(m[:1](x), m[1:](m[0](x)), m[:-1](x))
    for part in (m[:1], m[1:], m[::2], m[-1:], m[5:], m[1:3]):
        show(part)
    print(m[-1], m[0], m[-4], m[3])
    for i in (4, -5, 5, "1", None, 1.0):
        attempt(lambda: m[i])
    print([k for k in dir(m) if k.isdigit()], getattr(m, "2"))
    od = nn.Sequential(OrderedDict([("fc", nn.Linear(3, 2)), ("act", nn.ReLU()), ("out", nn.Linear(2, 1))]))
    show(od[1:])
    print(od[-1], od(x))
    """)


def test_sequential_edits_keep_parameters_state_dict_and_repr_as_torch():
    same_output(SEQUENTIAL, """
    m = build()
    m[2] = nn.Linear(4, 5)
    show(m)
    attempt(lambda: m.__setitem__(7, nn.ReLU()))
    attempt(lambda: m.__setitem__(1, 3))
    attempt(lambda: m.__setitem__(1, torch.zeros(2)))
    del m[1]
    show(m)
    print(getattr(m, "1"), getattr(m, "2"), hasattr(m, "3"))
    del m[1:]
    show(m)
    for edit in (lambda m: m.__delitem__(-1), lambda m: m.__delitem__(slice(None, None, 2)),
                 lambda m: m.__delitem__(slice(7, 9)), lambda m: attempt(lambda: m.__delitem__(9))):
        m = build()
        edit(m)
        show(m)
    m = build()
    print(m.pop(1), m.pop(-1))
    show(m)
    print(m.pop(slice(0, 1)))
    show(m)
    m = build()
    print(m.append(nn.Sigmoid()) is m, m.insert(1, nn.Identity()) is m)
    m.insert(-1, nn.Dropout())
    m.insert(len(m), nn.ReLU())
    show(m)
    print(getattr(m, "1"), getattr(m, "7"))
    for i in (20, -20):
        attempt(lambda: m.insert(i, nn.ReLU()))
    m = build()
    print(m.extend(nn.Sequential(nn.ReLU(), nn.Linear(2, 2))) is m)
    m.extend([nn.Tanh()])
    show(m)
    print(m(x))
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(3, 2)), ("act", nn.ReLU())]))
    attempt(lambda: named.insert(0, nn.ReLU()))
    named.insert(2, nn.Tanh())
    show(named)
    del named[0]
    show(named)
    """)


def test_sequential_arithmetic_and_construction_as_torch():
    same_output(SEQUENTIAL, """
    a, b = build(), nn.Sequential(nn.Linear(2, 2))
    c = a + b
    show(c)
    print(c(x), c[4] is b[0])
    attempt(lambda: a + 3)
    a += b
    show(a)
    attempt(lambda: a.__iadd__([]))
    for d in (b * 3, 2 * b):
        show(d)
    b *= 2
    show(b)
    print(b(torch.ones(1, 2)).shape)
    attempt(lambda: nn.Sequential(3))
    for key in ("a.b", "", "forward"):
        attempt(lambda: nn.Sequential(OrderedDict([(key, nn.ReLU())])))
    e = nn.Sequential()
    print(e, len(e), e(x) is x, list(e))
    n = nn.Sequential(None, nn.ReLU())
    print(n, len(n), list(n._modules))
    """)


def test_sequential_transfer_learning_replaces_the_head_and_trains_it():
    same_output(SEQUENTIAL, """
    torch.manual_seed(0)
    classifier = nn.Sequential(nn.Dropout(), nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
    for p in classifier.parameters():
        p.requires_grad = False
    classifier[3] = nn.Linear(8, 10)
    classifier.eval()
    print(classifier, [name for name, p in classifier.named_parameters() if p.requires_grad])
    loss = classifier(x).pow(2).sum()
    loss.backward()
    print(loss, classifier[-1].weight.grad, classifier[1].weight.grad)
    head = classifier.pop(-1)
    print(classifier(x).shape, head.weight.shape, list(classifier.state_dict()))
    """)


@needs_torch
def test_sequential_messages_name_torchs_class_paths_under_gradviz():
    """torch's messages print a class's path (torch.nn.modules.container.Sequential); gradviz's
    classes live at the same paths under gradviz, so each message is torch's with the one word."""
    def message(mod, action):
        seq = mod.nn.Sequential(mod.nn.ReLU())
        try:
            action(mod, seq)
        except Exception as e:   # noqa: BLE001  (the type is compared too)
            return type(e), str(e).replace(mod.__name__ + ".", "<lib>.")
        raise AssertionError("no error")

    actions = (lambda mod, seq: seq + mod.nn.ModuleList(), lambda mod, seq: seq * 0, lambda mod, seq: seq * 1.5,
               lambda mod, seq: seq.insert(0, 3))
    for action in actions:
        assert message(gradviz, action) == message(torch, action)


def test_sequential_edits_rename_the_diagram_scopes_and_parameters():
    nn = gradviz.nn
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    m.insert(0, nn.Linear(3, 3))
    assert [p.name for p in m.parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"]
    assert [c._scope_name for c in m] == ["0 (Linear)", "1 (Linear)", "2 (ReLU)", "3 (Linear)"]
    del m[:2]
    assert [p.name for p in m.parameters()] == ["1.weight", "1.bias"]
    assert [c._scope_name for c in m] == ["0 (ReLU)", "1 (Linear)"]


def test_backends_flags_and_global_switches_as_torch():
    """The flags tutorials set (cudnn.benchmark, matmul.allow_tf32, ...): torch's defaults, type
    checks and messages; each snippet puts back what it changed. (torch's own test utilities, which
    the OpInfo tests import, freeze torch's flags for the rest of the process: thawed here.)"""
    thawed = getattr(torch.backends, "__allow_nonbracketed_mutation")
    with thawed():
        _same_backends_output()


def _same_backends_output():
    same_output("""
    import numpy as np
    b = torch.backends
    print(b.mps.is_available(), b.mps.is_built(), b.cudnn.is_available(), b.cudnn.version())
    print(b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.enabled, b.cudnn.allow_tf32)
    print(b.cuda.matmul.allow_tf32, b.cuda.matmul.allow_fp16_reduced_precision_reduction,
          b.cuda.matmul.allow_bf16_reduced_precision_reduction, b.cuda.matmul.allow_fp16_accumulation,
          b.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k)
    def attempt(f):
        try:
            f()
            print("ok")
        except Exception as e:
            print(type(e).__name__, e)
    for name in ("benchmark", "deterministic", "enabled", "allow_tf32"):
        old = getattr(b.cudnn, name)
        setattr(b.cudnn, name, not old)
        print(name, getattr(b.cudnn, name))
        for bad in (1, "yes", None):
            attempt(lambda: setattr(b.cudnn, name, bad))
        setattr(b.cudnn, name, old)
        print(name, getattr(b.cudnn, name))
    m = b.cuda.matmul
    m.allow_tf32 = True
    print(m.allow_tf32)
    for bad in (1, None):
        attempt(lambda: setattr(m, "allow_tf32", bad))
    m.allow_tf32 = False
    attempt(lambda: setattr(m, "allow_fp16_accumulation", 1))
    for v in [(True, 1), (), (1,), (True, True, True), [False], (False, False), 0]:
        attempt(lambda: setattr(m, "allow_fp16_reduced_precision_reduction", v))
        print(m.allow_fp16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction_split_k)
    m.allow_fp16_reduced_precision_reduction = True
    attempt(lambda: m.no_such_flag)
    attempt(lambda: setattr(m, "no_such_flag", True))
    x = torch.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=torch.float32)
    b.cudnn.benchmark = True
    print(x @ x.T)
    b.cudnn.benchmark = False
    print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(True)
    print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(True, warn_only=True)
    print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(False)
    print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    for args, kw in [((1,), {}), ((None,), {}), (("a",), {}), ((True,), dict(warn_only=1))]:
        attempt(lambda: torch.use_deterministic_algorithms(*args, **kw))
    print(torch.are_deterministic_algorithms_enabled())
    n = torch.get_num_threads()
    print(isinstance(n, int) and n >= 1)
    torch.set_num_threads(1)
    print(torch.get_num_threads())
    torch.set_num_threads(np.int64(3))
    print(torch.get_num_threads())
    for bad in (0, -1, "a", 1.5, True, 2 ** 31, np.float64(2)):
        attempt(lambda: torch.set_num_threads(bad))
    print(torch.get_num_threads())
    torch.set_num_threads(n)
    print(type(torch.backends.cuda.matmul).__name__)
    """)


def test_backends_say_what_gradviz_has_and_change_nothing():
    import importlib
    backends = importlib.import_module("gradviz.backends.cudnn")
    assert backends is gradviz.backends.cudnn and gradviz.backends.mps.is_available() is False
    with pytest.raises(AttributeError, match="module 'gradviz.backends.cudnn' has no attribute 'nope'"):
        gradviz.backends.cudnn.nope
    x = gradviz.tensor(np.linspace(-1, 1, 24).reshape(1, 2, 3, 4), dtype=gradviz.float32)
    conv = gradviz.nn.Conv2d(2, 3, 2)
    before, threads = conv(x).detach().numpy(), gradviz.get_num_threads()
    try:
        gradviz.backends.cudnn.benchmark = gradviz.backends.cudnn.deterministic = True
        gradviz.backends.cudnn.enabled = False
        gradviz.backends.cuda.matmul.allow_tf32 = True
        gradviz.use_deterministic_algorithms(True)
        gradviz.set_num_threads(1)
        np.testing.assert_array_equal(conv(x).detach().numpy(), before)
    finally:
        gradviz.backends.cudnn.benchmark = gradviz.backends.cudnn.deterministic = False
        gradviz.backends.cudnn.enabled = True
        gradviz.backends.cuda.matmul.allow_tf32 = False
        gradviz.use_deterministic_algorithms(False)
        gradviz.set_num_threads(threads)

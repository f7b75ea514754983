"""The smaller names learners' programs reach for, against torch: nn.ParameterDict, nn.PReLU,
nn.Unflatten, nn.DataParallel (on a machine without an accelerator it wraps the module and
calls it), nn.utils.skip_init, nn.init.orthogonal_, LSTM/GRU/RNN.flatten_parameters() and
Module.get_parameter/get_buffer."""
from __future__ import annotations


import pytest

import gradviz
from tests.support.parity import needs_torch, same_output

pytestmark = needs_torch


def test_parameter_dict():
    out = same_output("""
    from collections import OrderedDict
    nn = torch.nn
    torch.manual_seed(0)
    pd = nn.ParameterDict({"b": nn.Parameter(torch.randn(2, 3)), "a": torch.ones(4)})
    pd["c"] = nn.Parameter(torch.zeros(1, dtype=torch.float64))
    pd.update([("d", torch.ones(2))])
    pd["e"] = "not a tensor"
    print(pd, len(pd), list(pd), "a" in pd, type(pd["a"]).__name__, pd["a"].requires_grad)
    print(list(pd.keys()), [k for k, _ in pd.items()], pd.get("zz", 5), list(reversed(pd)))
    print([n for n, _ in pd.named_parameters()], list(pd.state_dict()))
    print(pd.pop("d"), pd.popitem()[0], list(pd), pd.setdefault("f", torch.ones(1)), list(pd))
    both = pd | nn.ParameterDict(OrderedDict([("z", torch.ones(1)), ("y", torch.ones(2))]))
    print(list(both), type(both).__name__, list(pd.copy()), list(pd.fromkeys(["x", "w"], torch.ones(1))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.params = nn.ParameterDict({"left": nn.Parameter(torch.randn(5, 10)),
                                            "right": nn.Parameter(torch.randn(5, 10))})

        def forward(self, x, choice):
            return self.params[choice].mv(x)

    model = Model()
    model("left" and torch.ones(10), "right").sum().backward()
    print(model, model.params["right"].grad.sum(), model.params["left"].grad)
    pd.clear()
    print(pd, len(pd))
    for bad in (lambda: pd.update(3), lambda: pd.update([(1, 2, 3)]), lambda: pd.update([3]),
                lambda: pd.__setitem__(1, torch.ones(1)), lambda: pd(torch.ones(1))):
        try:
            bad()
        except (TypeError, ValueError, RuntimeError) as e:
            print(type(e).__name__, e)
    """)
    assert "ParameterDict(" in out


def test_prelu_and_unflatten():
    same_output("""
    nn = torch.nn
    act, per_channel = nn.PReLU(), nn.PReLU(3, init=0.1)
    print(act, per_channel, act.weight, list(per_channel.state_dict()))
    x = torch.linspace(-2, 2, 12).reshape(2, 3, 2).requires_grad_()
    y = per_channel(x)
    y.sum().backward()
    print(y, y.grad_fn.name(), per_channel.weight.grad, x.grad)
    un = nn.Unflatten(1, (2, 5))
    z = un(torch.arange(20.).reshape(2, 10))
    print(un, z.shape, z.grad_fn, nn.Unflatten(-1, [2, 2]),
          nn.Sequential(nn.Flatten(), nn.Unflatten(1, (3, 2)))(x).shape)
    for bad in (lambda: nn.Unflatten(1, 6), lambda: nn.Unflatten(1, (2, 3.0)), lambda: nn.Unflatten(1.0, (2, 3))):
        try:
            bad()
        except TypeError as e:
            print(e)
    """)


def test_data_parallel_wraps_and_calls_the_module():
    same_output("""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
    wrapped = nn.DataParallel(model)
    out = wrapped(torch.ones(5, 3))
    out.sum().backward()
    print(wrapped, wrapped.device_ids, wrapped.module is model, list(wrapped.state_dict()))
    print(out.squeeze(), model[0].bias.grad, type(wrapped).__module__.replace("torch", "gradviz"))
    print(isinstance(wrapped, nn.Module), [n for n, _ in wrapped.named_parameters()][:2])
    """)


def test_skip_init_draws_no_random_numbers_and_leaves_the_values_to_the_caller():
    same_output("""
    nn = torch.nn
    torch.manual_seed(0)
    layer = nn.utils.skip_init(nn.Linear, 5, 2, bias=False)
    after = torch.rand(3)
    torch.manual_seed(0)
    print(torch.equal(after, torch.rand(3)), layer, layer.weight.shape, layer.weight.requires_grad)
    nn.init.orthogonal_(layer.weight)
    print(torch.allclose(layer.weight @ layer.weight.T, torch.eye(2), atol=1e-6))
    m = nn.utils.skip_init(nn.Linear, in_features=6, out_features=1)
    print(m, [tuple(p.shape) for p in m.parameters()])
    try:
        nn.utils.skip_init(nn.ReLU)
    except RuntimeError as e:
        print(e)
    try:
        nn.utils.skip_init(int)
    except RuntimeError as e:
        print(e)
    """)


@pytest.mark.parametrize("shape,gain", [((3, 5), 2.0), ((5, 3), 1.0), ((4, 2, 2), 1.0), ((1, 1), 0.5)])
def test_orthogonal_init_draws_torchs_matrix(shape, gain):
    out = same_output(f"""
    torch.manual_seed(0)
    w = torch.empty{shape}
    print(torch.nn.init.orthogonal_(w, gain={gain}) is w, w)
    g = torch.Generator().manual_seed(3)
    print(torch.nn.init.orthogonal_(torch.empty{shape}, generator=g))
    """)
    assert "True" in out


def test_orthogonal_init_errors_and_empty_tensors():
    same_output("""
    try:
        torch.nn.init.orthogonal_(torch.empty(3))
    except ValueError as e:
        print(e)
    print(torch.nn.init.orthogonal_(torch.empty(0, 3)).shape)
    """)


def test_flatten_parameters_is_a_no_op_without_cudnn():
    same_output("""
    torch.manual_seed(0)
    for rnn in (torch.nn.LSTM(3, 4, 2), torch.nn.GRU(3, 4), torch.nn.RNN(3, 4, batch_first=True)):
        before = [p.clone() for p in rnn.parameters()]
        print(rnn.flatten_parameters(), all(torch.equal(a, b) for a, b in zip(before, rnn.parameters())))
    """)


def test_multi_class_hinge_losses():
    """MultiMarginLoss and MultiLabelMarginLoss: printing, buffers, each reduction, gradients."""
    same_output("""
    nn = torch.nn
    torch.manual_seed(0)
    a = torch.randn(3, 4, requires_grad=True)
    y, labels = torch.tensor([1, 0, 3]), torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [2, 2, -1, 0]])
    for loss in (nn.MultiMarginLoss(), nn.MultiMarginLoss(p=2, margin=0.5, reduction="none"),
                 nn.MultiMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.5]), reduction="sum"),
                 nn.MultiLabelMarginLoss(), nn.MultiLabelMarginLoss(reduction="none")):
        out = loss(a, labels if isinstance(loss, nn.MultiLabelMarginLoss) else y)
        out.sum().backward()
        print(loss, out, out.grad_fn.name(), a.grad, dict(loss.named_buffers()))
        a.grad = None
    print(nn.MultiMarginLoss(p=2).p, nn.MultiMarginLoss(margin=0.3).margin, nn.MultiLabelMarginLoss().reduction)
    """)


def test_to_empty_keeps_the_parameter_objects():
    layer = gradviz.nn.Linear(3, 2)
    weight = layer.weight
    assert layer.to_empty(device="cpu") is layer and layer.weight is weight and weight.shape == (2, 3)


def test_module_forms_of_functions():
    """The layers that wrap one F function: printing, outputs, gradients and parameters."""
    same_output("""
    nn = torch.nn
    torch.manual_seed(0)
    x = torch.randn(2, 4, 3, requires_grad=True)
    for layer in (nn.Threshold(0.1, 20.0), nn.Threshold(0.1, 2, inplace=False), nn.CELU(), nn.CELU(0.5), nn.GLU(),
                  nn.GLU(1), nn.Hardshrink(), nn.Softshrink(0.3), nn.Tanhshrink(), nn.Softmax2d(), nn.Dropout3d(0.0),
                  nn.Dropout3d(0.5).eval(), nn.Dropout2d(0.0)):
        y = layer(x if not isinstance(layer, nn.GLU) or layer.dim == 1 else x[..., :2])
        (y * y).sum().backward()
        name = y.grad_fn.name() if y.grad_fn is not None else None
        print(layer, name, y.sum(), x.grad.abs().sum())
        x.grad = None
    a, b = torch.randn(3, 5, requires_grad=True), torch.randn(3, 5)
    for layer in (nn.PairwiseDistance(), nn.PairwiseDistance(p=1.0, keepdim=True), nn.CosineSimilarity(),
                  nn.CosineSimilarity(dim=0, eps=1e-6)):
        y = layer(a, b)
        y.sum().backward()
        print(layer, y, a.grad.sum())
        a.grad = None
    bl = nn.Bilinear(5, 4, 2)
    y = bl(a, torch.ones(3, 4))
    y.sum().backward()
    print(bl, y, [tuple(p.shape) for p in bl.parameters()], bl.weight.grad.sum(), nn.Bilinear(2, 3, 4, bias=False))
    t = torch.tensor([1.0, -1.0, 1.0])
    print(nn.CosineEmbeddingLoss(margin=0.2)(a, b, t), nn.MarginRankingLoss()(a[:, 0], b[:, 0], t),
          nn.HingeEmbeddingLoss(reduction="sum")(a, torch.ones(3, 5)), nn.SoftMarginLoss()(a, torch.ones(3, 5)),
          nn.MultiLabelSoftMarginLoss()(a, (b > 0).float()), nn.PoissonNLLLoss()(a, b.abs()),
          nn.GaussianNLLLoss()(a, b, torch.ones(3, 5)), nn.TripletMarginLoss(margin=0.5)(a, b, -b))
    print(nn.CosineEmbeddingLoss(), nn.TripletMarginLoss(), nn.GaussianNLLLoss(full=True).full,
          nn.MultiLabelSoftMarginLoss(weight=torch.ones(5)).weight)
    try:
        nn.TripletMarginLoss(margin=0)
    except ValueError as e:
        print(e)
    """)


def test_padding_upsampling_and_pool_layers():
    same_output("""
    nn = torch.nn
    x1, x2 = torch.arange(6.).reshape(1, 2, 3), torch.arange(18.).reshape(1, 2, 3, 3)
    x3 = torch.arange(16.).reshape(1, 2, 2, 2, 2)
    for layer, x in ((nn.ConstantPad1d(2, 3.5), x1), (nn.ConstantPad1d((1, 0), 1), x1),
                     (nn.ConstantPad2d((1, 0, 2, 1), -1.0), x2), (nn.ConstantPad3d(1, 0.5), x3), (nn.ZeroPad1d(1), x1),
                     (nn.ZeroPad2d((1, 1, 0, 2)), x2), (nn.ZeroPad3d(1), x3), (nn.ReflectionPad1d(2), x1),
                     (nn.ReflectionPad2d((1, 2, 0, 1)), x2), (nn.ReplicationPad1d((0, 3)), x1),
                     (nn.ReplicationPad2d(2), x2), (nn.CircularPad1d(1), x1), (nn.CircularPad2d((1, 0, 1, 2)), x2),
                     (nn.UpsamplingNearest2d(scale_factor=2), x2), (nn.UpsamplingBilinear2d(size=(4, 5)), x2),
                     (nn.AdaptiveAvgPool3d((1, 2, 1)), x3)):
        y = layer(x)
        print(layer, tuple(y.shape), y.sum(), y.flatten()[:6])
    try:
        nn.CircularPad2d(1)(x3[0, 0, 0])
    except ValueError as e:
        print(e)
    """)


def test_rnn_bases_carry_torchs_names():
    nn = gradviz.nn
    assert isinstance(nn.LSTM(2, 3), nn.RNNBase) and isinstance(nn.GRUCell(2, 3), nn.RNNCellBase)


def test_embedding_bag_text_classifier():
    """The shape of PyTorch's text-classification tutorial: an EmbeddingBag over token runs split by
    offsets, then a Linear, trained a few steps with SGD."""
    same_output("""
    nn, F = torch.nn, torch.nn.functional

    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
            self.fc = nn.Linear(embed_dim, num_class)
            self.embedding.weight.data.uniform_(-0.5, 0.5)
            self.fc.weight.data.uniform_(-0.5, 0.5)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))

    torch.manual_seed(0)
    model = TextClassificationModel(20, 8, 4)
    print(model, nn.EmbeddingBag(5, 2, mode="max", padding_idx=-1), nn.EmbeddingBag(5, 2, mode="sum").weight.shape)
    optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
    criterion = nn.CrossEntropyLoss()
    text = torch.randint(0, 20, (30,))
    offsets = torch.tensor([0, 7, 12, 20, 26])
    labels = torch.tensor([0, 3, 1, 2, 3])
    for step in range(4):
        optimizer.zero_grad()
        out = model(text, offsets)
        loss = criterion(out, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        print(step, round(loss.item(), 5), out.argmax(1))
    print(model.embedding.weight.grad.abs().sum(), model.embedding(text[:6].reshape(2, 3)).grad_fn.name())
    bag = nn.EmbeddingBag(6, 3, mode="sum")
    print(bag(torch.tensor([1, 2, 1, 5]), torch.tensor([0, 2]), per_sample_weights=torch.tensor([0.5, 1.0, 2.0, -1.0])))
    for bad in (lambda: bag(torch.tensor([1, 2])), lambda: bag(torch.tensor([[1, 2]]), torch.tensor([0])),
                lambda: nn.EmbeddingBag(6, 3)(torch.tensor([1, 2]), torch.tensor([0]), torch.ones(2)),
                lambda: nn.EmbeddingBag(6, 3, padding_idx=6)):
        try:
            bad()
        except (ValueError, NotImplementedError, AssertionError) as e:   # the type named is the library's
            print(type(e).__name__, str(e).replace(str(type(text)), "<Tensor>"))
    """)


def test_init_functions_and_the_deprecated_names():
    same_output("""
    import warnings
    init = torch.nn.init
    torch.manual_seed(0)
    print(init.dirac_(torch.empty(2, 3, 3)), init.dirac_(torch.empty(4, 2, 1, 3), groups=2).sum(),
          init.dirac_(torch.empty(2, 2, 1, 1, 3))[1, 1])
    print(init.sparse_(torch.empty(5, 4), sparsity=0.4),
          init.sparse_(torch.empty(3, 2), 0.5, std=1.0, generator=torch.Generator().manual_seed(2)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = init.xavier_uniform(torch.empty(2, 3))
        init.normal(torch.empty(2), 0, 1)
    print(w, [(c.category.__name__, str(c.message)) for c in caught], init.orthogonal.__name__)
    for bad in (lambda: init.dirac_(torch.empty(2, 2)), lambda: init.dirac_(torch.empty(3, 2, 2), groups=2),
                lambda: init.sparse_(torch.empty(2), 0.1)):
        try:
            bad()
        except ValueError as e:
            print(e)
    """)


def test_the_argument_helpers_of_nn_modules_utils():
    from gradviz.nn.modules.utils import (_pair, _reverse_repeat_tuple, _single, _triple,
                                          consume_prefix_in_state_dict_if_present)
    assert (_single(3), _pair(2), _triple((1, 2, 3)), _pair([4, 5])) == ((3,), (2, 2), (1, 2, 3), (4, 5))
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    state = gradviz.nn.DataParallel(gradviz.nn.Linear(2, 1)).state_dict()
    consume_prefix_in_state_dict_if_present(state, "module.")
    assert list(state) == ["weight", "bias"]


def test_activations_take_torchs_inplace_flag():
    """Learners' code passes inplace=True (DCGAN's LeakyReLU(0.2, inplace=True), MobileNet's ReLU6):
    constructed, printed and run as torch's (gradviz computes these out of place)."""
    same_output("""
    nn = torch.nn
    x = torch.linspace(-8, 8, 9)
    for layer in (nn.LeakyReLU(0.2, inplace=True), nn.LeakyReLU(), nn.ReLU6(inplace=True), nn.ReLU6(),
                  nn.SiLU(inplace=True), nn.Mish(True), nn.SELU(inplace=True), nn.Hardsigmoid(inplace=True),
                  nn.Hardswish(True), nn.ELU(0.5, inplace=True), nn.Hardtanh(-2, 2, inplace=True), nn.Hardtanh()):
        print(layer, layer(x.clone()), isinstance(layer, nn.Hardtanh))
    net = nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True))
    print(net)
    """)


def test_adaptive_max_pool1d():
    same_output("""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, requires_grad=True)
    y, i = torch.nn.functional.adaptive_max_pool1d(x, 3, return_indices=True)
    y.sum().backward()
    print(y, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name(), i, x.grad[0])
    pool = torch.nn.AdaptiveMaxPool1d(4)
    print(pool, pool(x[0]).shape, torch.nn.AdaptiveMaxPool1d((2,), return_indices=True)(x)[1])
    try:
        pool(torch.randn(7))
    except RuntimeError as e:
        print(e)
    """)


def test_get_parameter_and_get_buffer():
    same_output("""
    nn = torch.nn
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    print(m.get_parameter("0.weight") is m[0].weight, m.get_buffer("1.running_mean") is m[1].running_mean)
    for call, target in [("get_parameter", "weight"), ("get_parameter", "0.nope"), ("get_parameter", "1.running_mean"),
                         ("get_parameter", "2.weight"), ("get_parameter", ""), ("get_buffer", "1.weight"),
                         ("get_buffer", "1.nope"), ("get_buffer", "1.num_batches_tracked")]:
        try:
            print(getattr(m, call)(target))
        except AttributeError as error:
            print(error)
    """)


def test_set_submodule_matches_torch():
    same_output("""
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(2, 1)))
    net.set_submodule("1.0", torch.nn.Tanh())
    net.set_submodule("2", torch.nn.Sigmoid())
    print(net)
    for args in [("", torch.nn.ReLU()), ("1.0", 3), ("1.5", torch.nn.ReLU(), True), ("0.weight", torch.nn.ReLU()),
                 ("3.x", torch.nn.ReLU())]:
        try:
            net.set_submodule(*args)
        except (ValueError, AttributeError) as e:
            print(type(e).__name__, e)
    """)


def test_clip_grads_with_norm_and_the_deprecated_clip_grad_norm():
    same_output("""
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.full((3,), 2.0)
    print(torch.nn.utils.clip_grad_norm(p, 1.0), p.grad)
    p.grad = torch.full((3,), 2.0)
    q = torch.nn.Parameter(torch.ones(2))
    q.grad = torch.tensor([0.1, -0.2])
    n = torch.nn.utils.get_total_norm([p.grad, q.grad])
    print(n, torch.nn.utils.clip_grads_with_norm_([p, q], 1.0, n), p.grad, q.grad)
    print(torch.nn.utils.clip_grads_with_norm_([p, q], 100.0, n), p.grad)
    print(torch.nn.utils.clip_grad_norm_([], 1.0), torch.nn.utils.clip_grads_with_norm_([], 1.0, n))
    conv, bn = torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2)
    print(type(torch.nn.utils.fuse_conv_bn_eval(conv.eval(), bn.eval())).__name__)
    """)


def test_reset_parameters_draws_what_torchs_draws():
    """Every module with parameters re-initializes in place from the same seed as torch's (the
    "for layer in model.children(): layer.reset_parameters()" idiom of re-training from scratch)."""
    same_output("""
    nn = torch.nn
    torch.manual_seed(0)
    mods = [nn.LSTM(3, 4, num_layers=2, bidirectional=True), nn.GRU(2, 3), nn.RNN(2, 3), nn.LSTMCell(2, 3),
            nn.Embedding(5, 3, padding_idx=1), nn.LayerNorm(4), nn.GroupNorm(2, 4), nn.RMSNorm(3),
            nn.LayerNorm(2, bias=False), nn.GroupNorm(1, 2, affine=False), nn.Linear(3, 2)]
    for m in mods:
        with torch.no_grad():
            for p in m.parameters():
                p.fill_(7.0)
        weight = next(m.parameters(), None)
        m.reset_parameters()
        print(type(m).__name__, [(n, p.requires_grad, sum(p.flatten().tolist())) for n, p in m.named_parameters()],
              weight is next(m.parameters(), None))
    print(nn.Embedding(4, 2, padding_idx=0).weight[0], nn.Embedding(4, 2, _freeze=True).weight.requires_grad)
    """)

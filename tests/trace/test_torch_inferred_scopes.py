"""Module clusters of a finished torch graph, inferred from the parameters each node reads (no
record_forward): a nanoGPT's residual adds belong to their block, as the forward hooks of
record_forward see them; of a weight tied to the token embedding and the output layer, the lookup
is drawn in the embedding and the product in the output layer; no module's nodes are left and re-entered (a folded box would make a cycle); and a deep
model folds one box per block, not one for the whole list of blocks."""
import pytest

torch = pytest.importorskip("torch")

from gradviz.render import draw  # noqa: E402
from gradviz.torch_bridge import record_forward, record_torch, trace_from_torch  # noqa: E402
from tests.support.torch_models import GPT, _language_model, make_resnet18  # noqa: E402

pytestmark = pytest.mark.torch


def _gpt(n_layer: int):
    torch.manual_seed(0)
    model = GPT(vocab_size=17, block_size=16, n_layer=n_layer, n_head=2, n_embd=32)
    idx, targets = torch.randint(0, 17, (2, 16)), torch.randint(0, 17, (2, 16))
    return model, idx, targets


def _op_scopes(trace) -> list:
    return [(n.name, n.scope) for n in trace.nodes if n.kind == "op"]


def test_a_blocks_residual_adds_are_the_blocks_as_the_forward_hooks_see_them():
    model, idx, targets = _gpt(3)
    with record_forward(model) as rec:
        loss = _language_model(model, idx, targets)
    seen = _op_scopes(trace_from_torch(loss, params=dict(model.named_parameters()), forward=rec))
    inferred = _op_scopes(record_torch(loss, model=model).run())
    assert [name for name, _ in seen] == [name for name, _ in inferred]
    # record_forward's scopes are the modules called (a ModuleList is not): the innermost ones agree
    adds = [(s, i) for (name, s), (_, i) in zip(seen, inferred) if name == "AddBackward0" and "(Block)" in " ".join(s)]
    assert len(adds) == 6 and all(s[-1] == i[-1] for s, i in adds), adds      # two residual adds in each of 3 blocks
    # the output layer reads the token embedding's weight: the lookup is the embedding's and the
    # product the output layer's, as the hooks see them, never the product in the embedding's box
    assert not any(name == "MmBackward0" and "wte (Embedding)" in " ".join(i) for name, i in inferred)
    tied = [(s[-1], i[-1]) for (name, s), (_, i) in zip(seen, inferred)
            if name in ("EmbeddingBackward0", "TBackward0", "MmBackward0") and s[-1] in ("wte (Embedding)", "lm_head (Linear)")]
    assert len(tied) == 3 and all(s == i for s, i in tied), tied


@pytest.mark.parametrize("n_layer", [1, 4])
def test_no_inferred_module_is_left_and_entered_again(n_layer):
    model, idx, targets = _gpt(n_layer)
    _assert_each_module_in_one_piece(record_torch(_language_model(model, idx, targets), model=model).run())


def _assert_each_module_in_one_piece(trace):
    """No inferred module is left and entered again (folded into a box, it would make a cycle)."""
    consumers: dict = {}
    for e in trace.edges:
        consumers.setdefault(e.src, []).append(e.dst)
    ops = {n.id: tuple(n.scope) for n in trace.nodes if n.kind == "op"}
    for path in {s[:k] for s in ops.values() for k in range(1, len(s) + 1)}:
        inside = {i for i, s in ops.items() if s[:len(path)] == path}
        left = [d for i in inside for d in consumers.get(i, ()) if d not in inside]
        seen = set()
        while left:                                   # everything reachable once outside the module
            node = left.pop()
            assert node not in inside, f"{'/'.join(path)} is left and entered again"
            if node not in seen:
                seen.add(node)
                left.extend(consumers.get(node, ()))


def test_a_linears_reshapes_on_a_batch_of_sequences_are_the_linears():
    """A Linear on (batch, time, features) flattens its input to rows and shapes its product back:
    both reshapes are the Linear's, as record_forward sees them (they were drawn in the block around
    it, or in the GELU after it). Every node of the GPT is in the innermost module the hooks saw, but
    the sum of its embeddings, the model's own code between the embeddings and the blocks."""
    model, idx, targets = _gpt(2)
    with record_forward(model) as rec:
        loss = _language_model(model, idx, targets)
    seen = _op_scopes(trace_from_torch(loss, params=dict(model.named_parameters()), forward=rec))
    inferred = _op_scopes(record_torch(loss, model=model).run())
    differ = [(name, s[-1:], i[-1:]) for (name, s), (_, i) in zip(seen, inferred) if s[-1:] != i[-1:]]
    assert differ == [("AddBackward0", ("GPT",), ("transformer (ModuleDict)",))], differ
    reshapes = [i[-1] for name, i in inferred if name in ("ViewBackward0", "UnsafeViewBackward0")
                and i and i[-1].endswith("(Linear)")]
    assert len(reshapes) == 2 * (4 * 2 + 1), reshapes   # 4 Linears a block, 2 blocks, and the output layer


def test_a_deep_model_folds_one_box_per_block():
    model, idx, targets = _gpt(6)
    diagram = draw(_language_model(model, idx, targets), model=model)
    titles = sorted(g.title for g in diagram.view.groups)
    assert titles == [f"{k} (Block)" for k in range(6)], diagram.view.notes


def test_a_resnets_residual_adds_and_relus_are_their_blocks_and_it_folds_into_them():
    case = make_resnet18()
    with record_forward(case.model) as rec:
        loss = case.loss()
    seen = _op_scopes(trace_from_torch(loss, params=dict(case.model.named_parameters()), forward=rec))
    trace = record_torch(loss, model=case.model).run()
    inferred = _op_scopes(trace)
    adds = [(s[-1], i[-1]) for (name, s), (_, i) in zip(seen, inferred) if name == "AddBackward0"]
    # out += identity: in its BasicBlock, the layer's last block's too (it reads the block before's
    # output, which a Sequential hands on to nothing but its next child: not the model's own code)
    assert adds == [("0 (BasicBlock)", "0 (BasicBlock)"), ("1 (BasicBlock)", "1 (BasicBlock)")] * 4, adds
    # each ReLU and the max pool in the module that made it, as record_forward saw it: the block's
    # `relu` after its add, the model's own `relu` and `maxpool`
    assert [s[-1:] for _, s in seen] == [i[-1:] for _, i in inferred]
    diagram = draw(case.loss(), model=case.model)   # its blocks fold as record_forward's do
    assert sorted(g.title for g in diagram.view.groups) == [f"{k} (BasicBlock)" for k in (0, 1) for _ in range(4)]


def _conv_block(i, o):
    return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.BatchNorm2d(o), torch.nn.ReLU(inplace=True),
                               torch.nn.Conv2d(o, o, 3, padding=1), torch.nn.BatchNorm2d(o), torch.nn.ReLU(inplace=True))


class _UNetLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.down, self.pool, self.mid = _conv_block(1, 4), torch.nn.MaxPool2d(2), _conv_block(4, 8)
        self.up, self.out = torch.nn.Upsample(scale_factor=2), torch.nn.Conv2d(12, 1, 1)

    def forward(self, x):
        a = self.down(x)
        return self.out(torch.cat([a, self.up(self.mid(self.pool(a)))], 1))


def _vgg_like():
    nn = torch.nn
    features = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3), nn.ReLU(),
                             nn.Dropout(0.5), nn.AdaptiveAvgPool2d(1))   # training: the Dropout makes a node
    return nn.Sequential(features, nn.Flatten(), nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


@pytest.mark.parametrize("make,outside", [(_UNetLike, {"up (Upsample)"}), (_vgg_like, set())])
def test_a_sequentials_modules_without_parameters_hold_their_nodes(make, outside):
    """A ReLU, a pooling or a Flatten module in a Sequential holds its node, as the hooks see it, the
    last one of a block included (it was drawn in the BatchNorm before it, or outside the block); one
    the model's own code calls holds its node where the model has one module making such nodes (the
    UNet's `pool`); an Upsample's node, which nothing tells, stays unplaced."""
    torch.manual_seed(0)
    model = make()
    with record_forward(model) as rec:
        loss = model(torch.randn(2, 1, 16, 16)).sum()
    seen = _op_scopes(trace_from_torch(loss, params=dict(model.named_parameters()), forward=rec))
    trace = record_torch(loss, model=model).run()
    missed = {s[-1] for (name, s), (_, i) in zip(seen, _op_scopes(trace)) if s[-1:] != i[-1:]}
    assert missed == outside
    _assert_each_module_in_one_piece(trace)

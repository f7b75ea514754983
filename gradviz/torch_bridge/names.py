"""Names for a torch graph without a separate record_forward: tensors named by the caller's
variables or `params`, parameters by their module's `named_parameters()`, and module clusters
inferred from where parameters are read.

A finished graph no longer says which module ran each node (only forward hooks, while the forward
runs, can tell: `record_forward`). What it does say is which parameters each node reads, and a
parameter's name is its module's path: a node that reads parameters of one module (a Linear's
addmm, a Conv2d's convolution, a norm's batch_norm, with the weight's transpose) is placed in that
module's cluster. Nodes that read no parameter (activations, residual adds, attention's softmax)
join the deepest module they lie between (a path from one of its ops to another passes them), or
else the modules shared by the scoped ops around them; where that is a ModuleList or a Sequential,
which make no node of their own, the child that made their latest input (_out_of_containers).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..naming import module_parameters, tensors_named
from .support import is_accumulate, node_name, torch_module

# ops that only rearrange a parameter (a Linear's weight.t(), an LSTM's weight views): what they
# make still belongs to the parameter's module. An embedding lookup is not one: it reads data.
_REARRANGING = {"TBackward0", "TransposeBackward0", "PermuteBackward0", "ViewBackward0", "UnsafeViewBackward0",
                "ReshapeAliasBackward0", "ExpandBackward0", "CloneBackward0", "ToCopyBackward0", "SliceBackward0",
                "SelectBackward0", "SplitBackward0", "UnbindBackward0", "UnsqueezeBackward0", "SqueezeBackward0",
                "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward3", "SqueezeBackward4", "ConjBackward0"}


# modules whose forward makes no node of its own: a ModuleList's or a Sequential's children are
# stages run one after another (a node between two is the tail of the one before), a ModuleDict's are
# looked up by name by its owner's code (a node between two is the owner's code)
_STAGES = ("(ModuleList)", "(Sequential)")
_NAMESPACES = ("(ModuleDict)",)


@dataclass
class Naming:
    """name -> tensor (the caller's and the modules' names) and parameter -> its module's scope path."""
    tensors: dict = field(default_factory=dict)
    param_scopes: dict = field(default_factory=dict)   # id(parameter) -> scope path
    sequences: dict = field(default_factory=dict)      # a Sequential's scope path -> its children's segments
    children: dict = field(default_factory=dict)       # every module's scope path -> its children's segments
    _by_id: dict = field(default_factory=dict)

    def name_of(self, tensor) -> str:
        return self._by_id.get(id(tensor), "")

    @classmethod
    def of(cls, names: dict | None = None, model=None, caller: dict | None = None) -> "Naming":
        """Names from `names` first, then `model`'s parameters and those of the caller's modules, then
        (when no `names` are given) the caller's tensors, by gradviz's rule for its own: a tensor
        held under exactly one public name is called by it (`naming.tensors_named`)."""
        torch = torch_module()
        naming = cls()
        naming.add(names or {})
        modules = [model] if model is not None else []
        if caller:
            held = [v for k, v in caller.items() if isinstance(v, torch.nn.Module) and not k.startswith("_")]
            modules += [m for m in _outermost(held) if all(m is not n for n in modules)]
        for m in modules:   # model.2.bias, not 2.bias, which reads as arithmetic (naming.parameter_name)
            naming.add(module_parameters(m, caller))
            naming.param_scopes.update(_param_scopes(m))
            naming.sequences.update(_sequences(m))
            naming.children.update(_children(m))
        if caller and names is None:
            naming.add(tensors_named(caller, lambda v: isinstance(v, torch.Tensor)))
        return naming

    def add(self, names: dict) -> None:
        for name, t in names.items():
            if id(t) not in self._by_id:
                self._by_id[id(t)] = str(name)   # names={123: x} is shown as text
                self.tensors[str(name)] = t


def _outermost(modules: list) -> list:
    """The modules none of the others contains (a model, not also its layers held in variables)."""
    inner = {id(sub) for m in modules for sub in m.modules() if sub is not m}
    seen, out = set(), []
    for m in modules:
        if id(m) not in inner and id(m) not in seen:
            seen.add(id(m))
            out.append(m)
    return out


def scope_segments(module) -> dict:
    """Module -> its scope segment, as gradviz.nn names them: the root by its class, a
    child as "attribute (Class)"."""
    segments: dict = {}
    for qualname, m in module.named_modules():
        if m in segments:
            continue
        attr = qualname.rsplit(".", 1)[-1]
        segments[m] = f"{attr} ({type(m).__name__})" if qualname else type(m).__name__
    return segments


@dataclass(frozen=True)
class Tied:
    """A parameter held by several modules (a GPT's token embedding tied to its output layer): their
    scope paths. Which of them read it is told by the node that reads it (`_reader`)."""
    paths: tuple


def _module_paths(module) -> list:
    """(scope path, module) of `module` and each module in it, parents first: each module's path is
    its parent's and its own segment (scope_segments' names)."""
    paths: dict = {}
    out: list = []
    for qualname, m in module.named_modules():   # parents before their children, each module once
        parent, _, attr = qualname.rpartition(".")
        paths[qualname] = paths[parent] + (f"{attr} ({type(m).__name__})",) if qualname else (type(m).__name__,)
        out.append((paths[qualname], m))
    return out


def _param_scopes(module) -> dict:
    """id(parameter) -> the scope path of the module that owns it (root first), or Tied."""
    out: dict = {}
    for path, m in _module_paths(module):
        for p in m._parameters.values():
            if p is not None:
                held = out.get(id(p), path)
                out[id(p)] = path if held == path else Tied((held.paths if isinstance(held, Tied) else (held,)) + (path,))
    return out


def _children(module) -> dict:
    """Each module's scope path -> its children's segments, in the order they were added."""
    return {path: tuple(f"{name} ({type(child).__name__})" for name, child in m.named_children())
            for path, m in _module_paths(module)}


def _sequences(module) -> dict:
    """A Sequential's scope path -> its children's segments, in the order its forward runs them."""
    children = _children(module)
    return {path: children[path] for path, m in _module_paths(module) if isinstance(m, torch_module().nn.Sequential)}


# the node a lookup module makes from its weight: the one reading node a tied weight's other module cannot make
_LOOKUPS = {"EmbeddingBackward0": "(Embedding)", "EmbeddingBagBackward0": "(EmbeddingBag)"}


def _reader(tied: Tied, fn):
    """The scope of the module, among those tying a weight, that made `fn` from it: a lookup's
    node belongs to the one lookup module (the GPT's token embedding), any other node to the one
    module that is no lookup (its output layer); None where that leaves no single module. Placed in
    the wrong one, the output layer's product would join the embedding's box at the graph's other end."""
    lookup = _LOOKUPS.get(node_name(fn))
    found = [p for p in tied.paths if (p[-1].endswith(lookup) if lookup else
                                       not p[-1].endswith(tuple(_LOOKUPS.values())))]
    return found[0] if len(found) == 1 else None


def inferred_scopes(order: list, param_scopes: dict, sequences: dict | None = None,
                    children: dict | None = None) -> dict:
    """Node -> scope path for the nodes that read parameters of one module: directly, or through
    ops that only rearrange that module's parameters (a weight's transpose); then the nodes around
    them (`_filled`; sequences and children: Naming's)."""
    if not param_scopes:
        return {}
    owner: dict = {}   # node that depends on parameters only -> the scope of their module (None: several)
    scopes: dict = {}
    for fn in order:   # inputs come first
        if is_accumulate(fn):
            owner[fn] = param_scopes.get(id(fn.variable), None)
            continue
        read, params_only = set(), True
        for nxt, _ in fn.next_functions:
            scope = owner.get(nxt)
            if isinstance(scope, Tied):
                scope = _reader(scope, fn)
            if scope is not None:
                read.add(scope)
            else:   # data (an input that needs no gradient, or an op's result), not a parameter
                params_only = False
        if len(read) == 1:
            scope = next(iter(read))
            scopes[fn] = scope
            if params_only and node_name(fn) in _REARRANGING:
                owner[fn] = scope
    return _filled(order, {**_reshaped_around(order, scopes), **scopes}, sequences or {}, children or {})


_RESHAPES = {"ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0"}


def _reshaped_around(order: list, scopes: dict) -> dict:
    """The reshapes a Linear makes around its product on a batch of sequences, in its module: its
    input flattened to rows (a reshape that feeds only the product) and the rows shaped back (a
    reshape of the product). The second is taken only where the first is there, so a learner's own
    view of a Linear's output on rows stays the learner's."""
    consumers: dict = {}
    for fn in order:
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                consumers.setdefault(nxt, []).append(fn)
    found: dict = {}
    for fn, scope in scopes.items():
        flat = [n for n, _ in fn.next_functions if n is not None and node_name(n) in _RESHAPES
                and consumers.get(n) == [fn] and n not in scopes]
        back = [n for n in consumers.get(fn, ()) if node_name(n) in _RESHAPES and n not in scopes]
        if len(flat) == 1 and len(back) == 1:
            found[flat[0]] = found[back[0]] = scope
    return found


def _filled(order: list, scopes: dict, sequences: dict, children: dict) -> dict:
    """The nodes between those of one module placed in it too, so a module's nodes are one piece, as
    record_forward would draw them, and folding a module into one box makes no cycle. A node that
    reads no parameter (a block's ReLU, its residual add) on a path from an op of a module to another
    op of the same module belongs to the deepest such module (`_between`); one on no such path gets
    the scope shared (the longest common prefix) by the nearest scoped ops before it and after it,
    found through the unscoped ones, where it has both."""
    ops = [fn for fn in order if not is_accumulate(fn)]
    inputs = {fn: [n for n, _ in fn.next_functions if n is not None and not is_accumulate(n)] for fn in ops}
    consumers: dict = {}
    for fn in ops:
        for nxt in inputs[fn]:
            consumers.setdefault(nxt, []).append(fn)
    at = {fn: k for k, fn in enumerate(ops)}
    scopes = {**_between(ops, at, inputs, consumers, scopes), **scopes}
    before = _shared(ops, inputs, scopes)                    # inputs come first in `order`
    after = _shared(ops[::-1], consumers, scopes)
    found = dict(scopes)
    for fn in ops:
        if fn not in scopes and before[fn] and after[fn]:
            common = _common_prefix(before[fn], after[fn])
            if common:
                found[fn] = common
    return _out_of_containers(ops, at, inputs, found, sequences, children)


def _out_of_containers(ops: list, at: dict, inputs: dict, found: dict, sequences: dict, children: dict) -> dict:
    """A node placed in a module that makes no node of its own, moved to the module that made it: in
    a Sequential, the child after the one that made its one input where that child has no parameters
    and makes such nodes (`_next_stage`: a ReLU module after a BatchNorm, the last one included);
    else in a ModuleList or a Sequential, the child that made its latest input (a block's residual
    add, after its last layer); in a ModuleDict, the same only where that child is a list of stages
    (a GPT's `transformer.h`): the sum of its token and position embeddings, the model's own code
    between two of its modules, stays in the ModuleDict, drawn around them both. A node reading two
    children of one Sequential goes into that Sequential first (`_inside_sequential`), and a node a
    module's own child module makes goes into that child (`_own_child`). `ops` lists inputs first
    (`at`: each one's position), so an input already moved counts where it went."""
    for fn in ops:
        stage = _next_stage(fn, inputs[fn], found, sequences)
        if stage is not None:
            found[fn] = stage
            continue
        path = _inside_sequential(fn, inputs[fn], found, sequences) or found.get(fn)
        if path:
            found[fn] = path
        while path and path[-1].endswith(_STAGES + _NAMESPACES):
            below = [n for n in inputs[fn] if len(found.get(n, ())) > len(path) and found[n][:len(path)] == path]
            child = found[max(below, key=at.__getitem__)][:len(path) + 1] if below else None
            if child is None or path[-1].endswith(_NAMESPACES) and not child[-1].endswith(_STAGES):
                break
            path = found[fn] = child
        own = _own_child(fn, path or (), inputs[fn], found, children, sequences)
        if own is not None:
            found[fn] = own
    return found


def _inside_sequential(fn, inputs: list, found: dict, sequences: dict):
    """The deepest Sequential below fn's place whose children made fn's inputs, where they are two
    or more of its children: a Sequential's forward hands on only its last child's output, so a node
    reading an earlier child's value is inside it (a ResNet layer's last block adds its input, the
    block before's output, to its last convolution's; it lay between the layers, in the model)."""
    paths = [found[n] for n in inputs if n in found]
    here = found.get(fn, ())
    if len(paths) < 2:
        return None
    common = paths[0]
    for p in paths[1:]:
        common = _common_prefix(common, p)
    for k in range(len(common), len(here), -1):
        if common[:k] in sequences and common[:len(here)] == here and len({p[k] for p in paths if len(p) > k}) > 1:
            return common[:k]
    return None


def _own_child(fn, path: tuple, inputs: list, found: dict, children: dict, sequences: dict):
    """The child module that made `fn`, of the module it lies in or (reading one input) of the modules
    around that input below it, innermost first: one without parameters that makes such nodes
    (`_MAKES`: a block's `relu`, called after its residual add), the module's only such child. A
    Sequential's children are told by their order instead (`_next_stage`)."""
    name = node_name(fn)
    around = found.get(inputs[0], ()) if len(inputs) == 1 else ()
    places = [around[:k] for k in range(len(around), len(path), -1)] if around[:len(path)] == path else []
    for place in places + ([path] if path else []):
        if place in sequences:
            continue
        makers = [c for c in children.get(place, ()) if name in _MAKES.get(c.rsplit(" (", 1)[-1][:-1], ())]
        if len(makers) == 1:
            return place + (makers[0],)
    return None


# the nodes a module with no parameters makes (torch's CPU kernels): what tells its node in a Sequential,
# or in a module that has one such child. A Dropout's is a MulBackward0, which a module's own code may as
# well make: it is told only by its place in a Sequential (_IN_ORDER).
_MAKES = {"ReLU": ("ReluBackward0",), "LeakyReLU": ("LeakyReluBackward0",), "GELU": ("GeluBackward0",),
          "Tanh": ("TanhBackward0",), "Sigmoid": ("SigmoidBackward0",), "SiLU": ("SiluBackward0",),
          "ELU": ("EluBackward0",), "Hardtanh": ("HardtanhBackward0",), "ReLU6": ("HardtanhBackward0",),
          "Mish": ("MishBackward0",), "Softplus": ("SoftplusBackward0",), "Softmax": ("SoftmaxBackward0",),
          "LogSoftmax": ("LogSoftmaxBackward0",), "Flatten": ("ViewBackward0",),
          "MaxPool2d": ("MaxPool2DWithIndicesBackward0",), "AvgPool2d": ("AvgPool2DBackward0",),
          "AdaptiveAvgPool2d": ("MeanBackward1", "AdaptiveAvgPool2DBackward0")}
_IN_ORDER = {**_MAKES, **dict.fromkeys(("Dropout", "Dropout1d", "Dropout2d", "Dropout3d"),
                                       ("MulBackward0", "NativeDropoutBackward0"))}


def _next_stage(fn, inputs: list, found: dict, sequences: dict):
    """The scope of the Sequential's child that made `fn`, where fn's one input was made by the child
    before it and that child has no parameters and makes nodes such as fn (ReLU, ReluBackward0);
    else None. Placed there, fn extends the Sequential by one node after its input: nothing enters
    the Sequential from outside, since fn has no other input."""
    if len(inputs) != 1 or inputs[0] not in found:
        return None
    path = found[inputs[0]]
    for k in range(len(path) - 1, 0, -1):   # the Sequentials around the input, innermost first
        children = sequences.get(path[:k])
        if children is None or path[k] not in children:
            continue
        at = children.index(path[k]) + 1
        if at == len(children):   # the input is this Sequential's output: the next child is its parent's
            continue
        kind = children[at].rsplit(" (", 1)[-1][:-1]
        return path[:k] + (children[at],) if node_name(fn) in _IN_ORDER.get(kind, ()) else None
    return None


def _between(ops: list, at: dict, inputs: dict, consumers: dict, scopes: dict) -> dict:
    """Unscoped node -> the deepest module it lies between: a path leads to it from an op of the
    module and on from it to another (a block's residual add, after its attention and before its MLP).
    A module's ops lie between the first and the last of them in `ops` (inputs first), so each module
    looks only there (`at`: each op's position). A node between two modules of one depth (neither
    inside the other) is left out."""
    members: dict = {}       # scope path (each prefix of a scoped op's path) -> positions of its ops
    for fn, path in scopes.items():
        if fn in at:
            for depth in range(1, len(path) + 1):
                members.setdefault(path[:depth], []).append(at[fn])
    best: dict = {}          # node -> (depth, path): path None where two modules of that depth tie
    for path, positions in members.items():
        first, last = min(positions), max(positions)
        inside = {ops[k] for k in positions}
        reached = set(inside)            # reached from an op of the module, going forward
        for fn in ops[first:last + 1]:
            if fn not in reached and any(n in reached for n in inputs[fn]):
                reached.add(fn)
        leads = set(inside)              # leading on to an op of the module
        for fn in reversed(ops[first:last + 1]):
            if fn not in leads and any(n in leads for n in consumers.get(fn, ())):
                leads.add(fn)
        for fn in (reached & leads) - scopes.keys():
            depth, held = best.get(fn, (0, None))
            if len(path) > depth:
                best[fn] = (len(path), path)
            elif len(path) == depth and path != held:
                best[fn] = (depth, None)    # a tie stays one, whatever shallower module comes after
    return {fn: path for fn, (_, path) in best.items() if path is not None}


def _shared(ops: list, links: dict, scopes: dict) -> dict:
    """Node -> the common prefix of the scopes of the nearest scoped nodes along `links` (through
    unscoped ones); None where none is reached. `ops` lists each node after those it links to."""
    shared: dict = {}
    for fn in ops:
        found = None
        for n in links.get(fn, ()):
            path = scopes.get(n, shared.get(n))
            if path is not None:
                found = path if found is None else _common_prefix(found, path)
        shared[fn] = found
    return shared


def _common_prefix(a: tuple, b: tuple) -> tuple:
    if a == b:   # most often: two nodes of one module
        return a
    k, n = 0, min(len(a), len(b))
    while k < n and a[k] == b[k]:
        k += 1
    return a[:k]

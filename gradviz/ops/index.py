"""Indexing: basic indexing as a chain of select/slice/unsqueeze views (as PyTorch
records it), advanced indexing as one IndexBackward0 whose VJP scatter-adds ḡ, so
repeated indices accumulate."""
from __future__ import annotations

import numpy as np

from .core import contiguous, diagonal_view, namespace, scatter_key, write
from .op import Op


def _at(dim, item):
    return (slice(None),) * dim + (item,)


# a[..., i, ...] with a trailing ... is a view even when it picks one element (NumPy would
# return a copied scalar), so writes into x[0] reach x as in PyTorch
SELECT = Op("select", "SelectBackward0", r"$c = $0[$select_at]", lambda xp, a, dim, i: a[_at(dim, i) + (Ellipsis,)],
            vjp=(lambda xp, g, c, a, dim, i: xp.index_scatter(g, a.shape, _at(dim, i), False),), params=("dim", "index"),
            vjp_latex=(r"\bar{g}\text{ placed in zeros at } [$select_at]",), jvp="linear")
SLICE = Op("slice", "SliceBackward0", r"$c = $0[$slice_at]",
           lambda xp, a, dim, start, end, step: a[_at(dim, slice(start, end, step))],
           vjp=(lambda xp, g, c, a, dim, start, end, step:
                xp.index_scatter(g, a.shape, _at(dim, slice(start, end, step)), False),), params=("dim", "start", "end", "step"),
           vjp_latex=(r"\bar{g}\text{ placed in zeros at } [$slice_at]",), jvp="linear")
INDEX = Op("index", "IndexBackward0", r"$c = $0[\mathrm{idx}]", lambda xp, a, idx: contiguous(a[idx]),
           vjp=(lambda xp, g, c, a, idx: xp.index_scatter(g, a.shape, idx, True),), params=("indices",), saves=("indices",),
           vjp_latex=(r"\bar{g}\text{ scatter-added at idx (repeats accumulate)}",), jvp="linear")
# pack_padded_sequence's data: the real rows of a padded batch, step by step. `index` picks them
# ((step, row) pairs, or (row, step) when the batch comes first), so the VJP puts ḡ back in their places
PACK_PADDED_SEQUENCE = Op("_pack_padded_sequence", "PackPaddedSequenceBackward0",
                          r"$c = $0[\mathrm{steps},\, \mathrm{rows}]", lambda xp, a, index: contiguous(a[index]),
                          vjp=(lambda xp, g, c, a, index: xp.index_scatter(g, a.shape, index, False),),
                          params=("index",), vjp_latex=(r"\bar{g}\text{ placed back in the padded batch, zeros elsewhere}",),
                          jvp="linear")
# x[key] = v on a tensor in the graph. With only tensor indices PyTorch records one
# IndexPutBackward0; with ints/slices/None it writes into a view, recorded as CopySlices.
# `basic` is a NumPy basic key (a view), `adv` the tensor indices applied to that view.
_PUT_VJP = (lambda xp, g, c, a, v, basic, adv: xp.index_fill_zero(g, basic, adv),
            lambda xp, g, c, a, v, basic, adv: _written(g, basic, adv))
COPY_SLICES = Op("index_put", "CopySlices", r"$c = $0;\; $c[\mathrm{idx}] = $1",
                 lambda xp, a, v, basic, adv: _put(a, v, basic, adv),
                 vjp=_PUT_VJP, args=("self", "values"),
                 params=("basic", "indices"), symbols=("a", "v"), broadcasts=(),
                 vjp_latex=(r"\bar{g}\text{ with zeros at idx}", r"\bar{g}[\mathrm{idx}]",), jvp="linear")
INDEX_PUT = Op("index_put", "IndexPutBackward0", r"$c = $0;\; $c[\mathrm{idx}] = $1",
               lambda xp, a, v, basic, adv: _put(a, v, basic, adv),
               vjp=_PUT_VJP, args=("self", "values"),
               params=("basic", "indices"), saves=("indices",), symbols=("a", "v"), broadcasts=(),
               vjp_latex=(r"\bar{g}\text{ with zeros at idx}", r"\bar{g}[\mathrm{idx}]",), jvp="linear")
ALIAS = Op("alias", "AliasBackward0", r"$c = $0", lambda xp, a: a[...], vjp=(lambda xp, g, c, a: g,),
           vjp_latex=(r"\bar{g}",), jvp="linear")
GATHER = Op("gather", "GatherBackward0", r"{$c}_{ij} = $0[i,\, \mathrm{idx}_{ij}]",
            lambda xp, a, dim, index: xp.gather_along(a, index, dim),
            vjp=(lambda xp, g, c, a, dim, index: xp.scatter_add_zeros(a.shape, dim, index, g),), params=("dim", "index"), saves=("index",),
            vjp_latex=(r"\bar{g}\text{ scatter-added back along dim } $dim",), jvp="linear")
SCATTER_ADD = Op("scatter_add", "ScatterAddBackward0", r"$c = $0;\; $c[\mathrm{idx}] \text{ += } $1",
                 lambda xp, a, src, dim, index: a + xp.scatter_add_zeros(a.shape, dim, index, src[_region(index)]),
                 vjp=(lambda xp, g, c, a, src, dim, index: g,
                      lambda xp, g, c, a, src, dim, index: _pad_to(xp, xp.gather_along(g, index, dim), src)), args=("self", "src"), params=("dim", "index"),
                 saves=("index",), symbols=("a", "src"), broadcasts=(),
                 vjp_latex=(r"\bar{g}", r"\operatorname{gather}(\bar{g},\, $dim,\, \mathrm{idx})",), jvp="linear")
INDEX_SELECT = Op("index_select", "IndexSelectBackward0", r"$c = $0[$index_at]",
                  lambda xp, a, dim, index: xp.take(a, index, axis=dim),
                  vjp=(lambda xp, g, c, a, dim, index: xp.index_scatter(g, a.shape, _at(dim, index), True),), params=("dim", "index"), saves=("index",),
                  vjp_latex=(r"\bar{g}\text{ scatter-added at idx}",), jvp="linear")


def _put(a, v, basic, adv):
    out = a.copy()
    write(out, basic, adv, v)
    return out


def _written(x, basic, adv):
    """x[basic][adv]: the region that index_put overwrote (arrays or Tensors)."""
    if basic:
        x = x[basic]
    return x if adv is None else x[adv]


def _region(index):
    return tuple(slice(0, s) for s in index.shape)


def _pad_to(xp, g, src):
    """gather(ḡ) has index's shape; src may be larger (only its leading region is used)."""
    if tuple(g.shape) == tuple(src.shape):
        return g
    return xp.index_scatter(g, src.shape, _region(g), False)


# -- the adjoints as differentiable ops, for the Tensor namespace (create_graph=True) --
INDEX_SCATTER = Op("index_scatter", "IndexPutBackward0", r"$c = 0;\; $c[\mathrm{idx}] \text{ += } $0",
                   lambda xp, g, shape, idx, acc: xp.index_scatter(g, shape, idx, acc),
                   vjp=(lambda xp, gg, c, g, shape, idx, acc: gg[idx],),
                   params=("shape", "indices", "accumulate"), symbols=("g",),
                   vjp_latex=(r"\bar{g}[\mathrm{idx}]",), jvp="linear")
SCATTER_ADD_ZEROS = Op("scatter_add", "ScatterAddBackward0", r"$c = 0;\; $c[\mathrm{idx}] \text{ += } $0",
                       lambda xp, g, shape, dim, index: xp.scatter_add_zeros(shape, dim, index, g),
                       vjp=(lambda xp, gg, c, g, shape, dim, index: xp.gather_along(gg, index, dim),), params=("shape", "dim", "index"), symbols=("g",),
                       vjp_latex=(r"\operatorname{gather}(\bar{g})",), jvp="linear")
DIAGONAL_SCATTER = Op("diagonal_scatter", "DiagonalScatterBackward0", r"$c = 0;\; \operatorname{diag}($c) = $0",
                      lambda xp, g, shape, offset, d1, d2: xp.diagonal_scatter(g, shape, offset, d1, d2),
                      vjp=(lambda xp, gg, c, g, shape, offset, d1, d2: xp.diagonal(gg, offset, d1, d2),), params=("shape", "offset", "dim1", "dim2"),
                      vjp_latex=(r"\operatorname{diag}(\bar{g})",), jvp="linear")


def _put_add(xp, a, v, basic, adv):
    out = a.copy()
    view = out[basic] if basic else out
    key = (...,) if adv is None else adv
    xp.xp.add.at(view, key, xp.broadcast_to(v, view[key].shape))
    return out


INDEX_PUT_ACC = Op("index_put", "IndexPutBackward0", r"$c = $0;\; $c[\mathrm{idx}] \text{ += } $1", _put_add,
                   vjp=(lambda xp, g, c, a, v, basic, adv: g,
                        lambda xp, g, c, a, v, basic, adv: _written(g, basic, adv)), args=("self", "values"), params=("basic", "indices"),
                   saves=("indices",),
                   vjp_latex=(r"\bar{g}", r"\bar{g}[\mathrm{idx}]",))


# -- sorting: values are a gather along dim, so their VJP scatters ḡ back ---------------
def _gather_op(name: str, torch_name: str, latex: str, **display) -> Op:
    display.setdefault("vjp_latex", (r"\bar{g}\text{ scattered back to where each value came from}",))
    return Op(name, torch_name, latex, lambda xp, a, dim, index: xp.take_along_axis(a, index, axis=dim),
              vjp=(lambda xp, g, c, a, dim, index: xp.scatter_add_zeros(a.shape, dim, index, g),),
              params=("dim", "indices"), saves=("indices",), **display)


SORT = _gather_op("sort", "SortBackward0", r"$c = \operatorname{sort}($0)")
TOPK = _gather_op("topk", "TopkBackward0", r"$c = \operatorname{topk}($0,\, k)")


# -- narrow, take_along_dim, masked_select, index_add/fill, scatter ----------
MASKED_SELECT = Op("masked_select", "MaskedSelectBackward0", r"$c = $0[\mathrm{mask}]",
                   lambda xp, a, mask: xp.broadcast_to(a, mask.shape)[mask],
                   vjp=(lambda xp, g, c, a, mask: xp.index_scatter(g, mask.shape, mask, False),), params=("mask",), saves=("mask",),
                   vjp_latex=(r"\bar{g}\text{ placed where mask holds}",), jvp="linear")


def _index_add(xp, a, src, dim, index, alpha):
    out = a.copy()
    xp.add.at(out, _at(dim, index), src * alpha if alpha != 1 else src)
    return out


INDEX_ADD = Op("index_add", "IndexAddBackward0", r"$c = $0;\; $c[$index_at] \text{ += } $alpha\, $1",
               _index_add,
               vjp=(lambda xp, g, c, a, src, dim, index, alpha: g,
                    lambda xp, g, c, a, src, dim, index, alpha: _times(_selected(xp, g, dim, index), alpha)),
               args=("self", "source"), params=("dim", "index", "alpha"),
               saves=("index",), symbols=("a", "src"), broadcasts=(),
               vjp_latex=(r"\bar{g}", r"$alpha\, \bar{g}[$index_at]",), jvp="linear")


def _selected(xp, g, dim, index):
    """ḡ.index_select(dim, index): the VJP of what index_add / index_copy write from their source."""
    return xp.take(g, index, axis=dim) if xp.arrays else xp.apply(INDEX_SELECT, (g,), (dim, index))


def _times(g, alpha):
    return g if alpha == 1 else g * alpha


def _fill_at(a, key, value):
    out = a.copy()
    out[key] = value
    return out


# `written` marks the entries replaced by the op: they get no gradient
INDEX_FILL = Op("index_fill", "IndexFillBackward0", r"$c = $0;\; $c[$index_at] = $value",
                lambda xp, a, dim, index, written, value: _fill_at(a, _at(dim, index), value),
                vjp=(lambda xp, g, c, a, dim, index, written, value: xp.where(written, 0, g),),
                params=("dim", "index", "written", "value"),
                vjp_latex=(r"\bar{g}\text{, 0 at idx}",))
# the VJP of an index's gradient (create_graph), after INDEX_FILL: a torch IndexFillBackward0 reads as index_fill
INDEX_FILL_ZERO = Op("index_fill", "IndexFillBackward0", r"$c = $0;\; $c[\mathrm{idx}] = 0",
                     lambda xp, g, basic, adv: xp.index_fill_zero(g, basic, adv),
                     vjp=(lambda xp, gg, c, g, basic, adv: xp.index_fill_zero(gg, basic, adv),), params=("basic", "indices"),
                     vjp_latex=(r"\bar{g}\text{, 0 at idx}",), jvp="linear")
SCATTER = Op("scatter", "ScatterBackward0", r"$c = $0;\; $c[\mathrm{idx}] = $1 \text{ (along dim } $dim\text{)}",
             lambda xp, a, src, dim, index, written: _scattered(xp, a, dim, index, src[_region(index)]),
             vjp=(lambda xp, g, c, a, src, dim, index, written: xp.where(written, 0, g),
                  lambda xp, g, c, a, src, dim, index, written:
                  _pad_to(xp, xp.gather_along(g, index, dim), src)), args=("self", "src"),
             params=("dim", "index", "written"), saves=("index",), symbols=("a", "src"), broadcasts=(),
             vjp_latex=(r"\bar{g}\text{, 0 at idx}", r"\operatorname{gather}(\bar{g},\, $dim,\, \mathrm{idx})",))
SCATTER_VALUE = Op("scatter", "ScatterBackward1",
                   r"$c = $0;\; $c[\mathrm{idx}] = $value \text{ (along dim } $dim\text{)}",
                   lambda xp, a, dim, index, written, value: _scattered(xp, a, dim, index, value),
                   vjp=(lambda xp, g, c, a, dim, index, written, value: xp.where(written, 0, g),), params=("dim", "index", "written", "value"),
                   vjp_latex=(r"\bar{g}\text{, 0 at idx}",))

# index_copy: the slices idx along dim replaced by the source's (a repeated index: its last slice);
# `written` marks the replaced entries, which get no gradient
INDEX_COPY = Op("index_copy", "IndexCopyBackward0", r"$c = $0;\; $c[$index_at] = $1",
                lambda xp, a, src, dim, index, written: _fill_at(a, _at(dim, index), src),
                vjp=(lambda xp, g, c, a, src, dim, index, written: xp.where(written, 0, g),
                     lambda xp, g, c, a, src, dim, index, written: _selected(xp, g, dim, index)),
                args=("self", "source"), params=("dim", "index", "written"), saves=("index",), symbols=("a", "src"),
                broadcasts=(), vjp_latex=(r"\bar{g}\text{, 0 at idx}", r"\bar{g}[$index_at]"), jvp="linear")


def _masked_scatter(xp, a, src, mask):
    out = xp.broadcast_to(a, mask.shape).copy()
    out[mask] = src.reshape(-1)[:int(mask.sum())]
    return out


def _masked_source(xp, g, src, mask):
    """ḡ where mask holds, in order, then zeros up to the source's size, in the source's shape."""
    taken = g[mask] if xp.arrays else xp.apply(MASKED_SELECT, (g,), (mask,))
    rest = xp.zeros_like(src).reshape(-1)[taken.shape[0]:]
    return xp.concatenate([taken, rest]).reshape(src.shape)


# masked_scatter: the entries where mask holds take the source's first entries, in order
MASKED_SCATTER = Op("masked_scatter", "MaskedScatterBackward0", r"$c = $0;\; $c[\mathrm{mask}] = $1_{[:n]}",
                    _masked_scatter,
                    vjp=(lambda xp, g, c, a, src, mask: xp.where(mask, 0, g),
                         lambda xp, g, c, a, src, mask: _masked_source(xp, g, src, mask)),
                    args=("self", "source"), params=("mask",), saves=("mask",), symbols=("a", "src"), broadcasts=(0,),
                    vjp_latex=(r"\bar{g}\text{, 0 where mask holds}", r"\bar{g}[\mathrm{mask}]\text{, then zeros}"),
                    jvp="linear")

_ACCUMULATE = {"sum": "add", "mean": "add", "amax": "maximum", "amin": "minimum"}   # prod: xp.multiply_at


def _scatter_reduce(xp, a, src, dim, index, reduce, include_self):
    """torch's CPU scatter_reduce: each src entry folded into its place in order (without include_self the
    places written start from the reduction's identity); mean divides by the count, self counted once."""
    key, out = scatter_key(xp, index, dim), a.copy()
    if not include_self:
        big = np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).max
        out[key] = {"sum": 0, "mean": 0, "prod": 1, "amax": -big if big == np.inf else np.iinfo(a.dtype).min,
                    "amin": big}[reduce]
    (xp.multiply_at if reduce == "prod" else getattr(xp, _ACCUMULATE[reduce]).at)(out, key, src[_region(index)])
    if reduce != "mean":
        return out
    count = xp.ones_like(a) if include_self else xp.zeros_like(a)
    xp.add.at(count, key, 1)
    count[count == 0] = 1
    return out / count if a.dtype.kind == "f" else out // count


def _scatter_reduce_vjp(xp, g, c, a, src_full, dim, index, reduce, include_self):
    """torch's scatter_reduce_backward, step for step: prod divides out each entry (a src entry that is the
    only zero of its place gets the product of the others), amax/amin share ḡ among the entries equal to
    the result, mean divides by the count; without include_self the places written give self nothing.
    On Tensors (create_graph=True) the same steps are recorded."""
    src = src_full if tuple(src_full.shape) == tuple(index.shape) else src_full[_region(index)]
    params = (dim, index, reduce, include_self)

    def gathered(t):
        return xp.gather_along(t, index, dim)

    def scatter_added(base, t):   # base.scatter_add(dim, index, t), of values that need no gradient
        return base + xp.scatter_add_zeros(tuple(a.shape), dim, index, t)

    def folded(x, y):
        return _scatter_reduce(xp, x, y, *params) if xp.arrays else xp.apply(SCATTER_REDUCE, (x, y), params)

    if reduce == "sum":
        g_self, g_src = g, gathered(g)
    elif reduce == "prod":
        masked_self = xp.where(a == 0, 1, a)
        g_self = g * folded(masked_self, src) / masked_self
        zero = src == 0
        zeros_at = gathered(scatter_added(xp.zeros_like(a), xp.astype(zero, a.dtype)))
        single = zero & (zeros_at == 1)
        g_src = xp.where(single, gathered(g * folded(a, xp.where(single, 1, src))),
                         gathered(g * c) / xp.where(zero, 1, src))
        if not xp.arrays and bool((zeros_at > 1).any()):   # torch's DelayedError node
            g_src = xp.apply(DELAYED_ERROR, (g_src,), ("scatter_reduce(): Double backward is unsupported for src when "
                                                       ">1 zeros in src are scattered to the same position in self",))
    elif reduce == "mean":
        n = scatter_added(xp.zeros_like(g) + 1 if include_self else xp.zeros_like(g), xp.zeros_like(src) + 1)
        n = xp.where(n == 0, 1, n)
        g_self, g_src = g / n, gathered(g) / gathered(n)
    else:
        is_self, is_src = a == c, src == gathered(c)
        shared = g / scatter_added(xp.astype(is_self, a.dtype), xp.astype(is_src, a.dtype))
        g_self, g_src = is_self * shared, is_src * gathered(shared)
    if not include_self:
        arrays = namespace(index)   # the places written, a mask on index's device
        written = arrays.zeros(tuple(a.shape), dtype=bool)
        written[scatter_key(arrays, index, dim)] = True
        g_self = xp.where(written, 0, g_self) if xp.arrays else xp.apply(SCATTER_VALUE, (g_self,), (dim, index, written, 0))
    return g_self, _pad_to(xp, g_src, src_full)


def _refuse(xp, g, c, a, message):
    raise RuntimeError(message)


# a gradient torch cannot differentiate again: the value passes, its own backward raises (torch's Error node)
DELAYED_ERROR = Op("delayed_error", "Error", r"$c = $0", lambda xp, a, message: a.copy(), vjp=(_refuse,),
                   params=("message",), vjp_latex=(r"\text{an error: } $message",))
SCATTER_REDUCE = Op("scatter_reduce", "ScatterReduceBackward0",
                    r"$c = $0;\; $c[\mathrm{idx}] \leftarrow $reduce($c[\mathrm{idx}],\, $1)",
                    _scatter_reduce,
                    vjp=(lambda xp, g, c, *args: _scatter_reduce_vjp(xp, g, c, *args)[0],
                         lambda xp, g, c, *args: _scatter_reduce_vjp(xp, g, c, *args)[1]),
                    args=("self", "src"), params=("dim", "index", "reduce", "include_self"),
                    saves=("self", "src", "result", "dim", "index", "reduce", "include_self"), symbols=("a", "src"),
                    broadcasts=(), vjp_latex=(r"\bar{g}\text{ by the rule of } $reduce",
                                              r"\bar{g}[\mathrm{idx}]\text{ by the rule of } $reduce"))


def _scattered(xp, a, dim, index, src):
    out = a.copy()
    out[scatter_key(xp, index, dim)] = src
    return out


INDEX_FILL_TENSOR = Op("index_fill", "IndexFillBackward1", r"$c = $0;\; $c[$index_at] = $1",
                       lambda xp, a, v, dim, index, written: _fill_at(a, _at(dim, index), v),
                       vjp=(lambda xp, g, c, a, v, dim, index, written: xp.where(written, 0, g),
                            lambda xp, g, c, a, v, dim, index, written: xp.sum(xp.where(written, g, 0))),
                       args=("self", "value"), params=("dim", "index", "written"),
                       vjp_latex=(r"\bar{g}\text{, 0 at idx}", r"\sum \bar{g}\text{ at idx}",))


# -- take, and the scatters that write one tensor into a region of another ------------------------
def _take_vjp(xp, g, c, a, idx):
    n = int(np.prod(a.shape))
    flat = xp.index_scatter(xp.reshape(g, (-1,)), (n,), (idx.reshape(-1),), True)
    return xp.reshape(flat, tuple(a.shape))


TAKE = Op("take", "TakeBackward0", r"$c = \operatorname{flat}($0)[\mathrm{idx}]", lambda xp, a, idx: a.reshape(-1)[idx],
          vjp=(_take_vjp,), params=("index",),
          saves=("index",), shown=(),
          vjp_latex=(r"\bar{g}\text{ scatter-added into } \operatorname{flat}($0) \text{ at idx}",), jvp="linear")


def _scatter_op(name: str, torch_name: str, latex: str, key, **display) -> Op:
    """c = a with src written into a region (a select, a slice, a diagonal): ḡ outside the region
    goes to a, ḡ inside it to src."""
    def forward(xp, a, src, *params):
        out = a.copy()
        view = key(xp, out, *params)
        view[...] = src
        return out

    def vjp_self(xp, g, c, a, src, *params):
        if xp.arrays:
            out = g.copy()
            key(xp, out, *params)[...] = 0
            return out
        return xp.apply(OPS_BY_NAME[torch_name], (g, xp.zeros_like(key(xp, g, *params))), params)

    def vjp_src(xp, g, c, a, src, *params):
        part = key(xp, g, *params)
        return part.copy() if xp.arrays else part

    return Op(name, torch_name, latex, forward, vjp=(vjp_self, vjp_src), args=("self", "src"),
              symbols=("a", "s"), **display)


SELECT_SCATTER = _scatter_op("select_scatter", "SelectScatterBackward0", r"$c = $0;\; $c[$select_at] = $1",
                             lambda xp, a, dim, i: a[_at(dim, i) + (Ellipsis,)], params=("dim", "index"),
                             vjp_latex=(r"\bar{g}\text{ with zeros at } [$select_at]", r"\bar{g}[$select_at]"),
                             jvp="linear")
SLICE_SCATTER = _scatter_op("slice_scatter", "SliceScatterBackward0",
                            r"$c = $0;\; $c[$slice_at] = $1",
                            lambda xp, a, dim, start, end, step: a[_at(dim, slice(start, end, step))],
                            params=("dim", "start", "end", "step"),
                            vjp_latex=(r"\bar{g}\text{ with zeros at } [$slice_at]",
                                       r"\bar{g}[$slice_at]"), jvp="linear")
DIAGONAL_SCATTER_SRC = _scatter_op("diagonal_scatter", "DiagonalScatterBackward0",
                                   r"$c = $0;\; \operatorname{diag}_{$offset}($c) = $1",
                                   diagonal_view, params=("offset", "dim1", "dim2"),
                                   vjp_latex=(r"\bar{g}\text{ with zeros on the diagonal}",
                                              r"\operatorname{diag}_{$offset}(\bar{g})"), jvp="linear")
OPS_BY_NAME = {op.torch_name: op for op in (SELECT_SCATTER, SLICE_SCATTER, DIAGONAL_SCATTER_SRC)}

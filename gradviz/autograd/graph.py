"""torch.autograd.graph: the names PyTorch offers there, each from the module that owns its job
(nodes.py: the graph's nodes; saved.py: saved tensors and their hooks; hooks.py: hooks over
several tensors). Also the node names the views read (ACCUMULATE_GRAD, node_order, ...), kept importable
from here."""
from __future__ import annotations

from .hooks import RemovableHandle, register_multi_grad_hook  # noqa: F401
from .nodes import GradientEdge, Node, get_gradient_edge, increment_version  # noqa: F401
from .saved import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks  # noqa: F401

# The names the layers above import from here (the grad_fn record of a leaf, a node's derivative order).
from .nodes import ACCUMULATE_GRAD, AccumulateGrad, _building, node_order  # noqa: F401,E402

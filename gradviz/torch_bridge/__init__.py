"""The torch bridge: a real PyTorch autograd graph as a second origin of gradviz's events.

- `trace_from_torch(*tensors)` (origin.py): the Trace of torch's graph, walked as torchviz walks
  it, node by node through the same Recorder gradviz's own graphs go through.
- `record_torch(roots)` (stepping.py): a Recording whose step() runs one node of torch's own
  backward, paused between nodes on a worker thread; `record_torch_backward` runs it to the end,
  and its Trace is made when first read, from what frozen.py took of the graph before the run.
- `record_forward(module)` (forward.py): watches a forward pass for each node's module and value.
- names.py names parameters and clusters modules from `model=` or the caller's variables;
  attrs.py reads a node's saved attributes as torch means them; previews.py makes Previews of
  torch tensors at the cost of the work.

Torch knows nothing of gradviz; only the public entry points that take torch tensors import
this package, and the package imports torch on first use.
"""
from .forward import ForwardRecord, record_forward
from .origin import op_table, trace_from_torch
from .stepping import TorchRecording, record_torch, record_torch_backward
from .support import TORCH_REQUIREMENT

__all__ = ["ForwardRecord", "TORCH_REQUIREMENT", "TorchRecording", "op_table", "record_forward", "record_torch",
           "record_torch_backward", "trace_from_torch"]

"""Recording a graph and its backward as a Trace (the package is named `tracing` because
`gradviz.trace` is torch.trace, the matrix trace).

One job per module: trace.py (the Trace and its JSON), recorder.py (events -> Trace), names.py
(one symbol per tensor), replay.py (a live graph replayed into a Recorder), recording.py (driving
a backward without changing .grad). The names other layers use are re-exported here.
"""
from ..autograd.describe import local_jacobians   # a node's local Jacobians, for the views that draw them
from .names import name_tensors, named
from .recorder import Output, Recorder
from .recording import (EngineRecording, GradSnapshot, Recording, ReplayRecording, record_backward,
                        written_tensors)
from .replay import build_trace, graph_freed, leaf_keys, name_intermediates, outputs_of, replay
from .trace import FORMAT_VERSION, LazyTrace, Trace

__all__ = ["FORMAT_VERSION", "EngineRecording", "GradSnapshot", "LazyTrace", "Output", "Recorder", "Recording",
           "ReplayRecording", "Trace", "build_trace", "graph_freed", "leaf_keys", "local_jacobians", "name_intermediates",
           "name_tensors", "named", "outputs_of", "record_backward", "replay", "written_tensors"]

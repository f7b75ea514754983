"""torch.nn.modules.padding: ZeroPad2d."""
from __future__ import annotations

from ...functions.conv import _tuple
from .. import functional as F
from .module import Module


class ZeroPad2d(Module):
    def __init__(self, padding):
        super().__init__()
        self.padding = _tuple(padding, 4)

    def forward(self, input):
        return F.pad(input, self.padding)

    def extra_repr(self):
        return f"{self.padding}"

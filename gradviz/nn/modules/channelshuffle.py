"""torch.nn.modules.channelshuffle: ChannelShuffle (ShuffleNet's mixing of channel groups)."""
from __future__ import annotations

from .. import functional as F
from .module import Module


class ChannelShuffle(Module):
    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"

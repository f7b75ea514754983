"""torch.nn.modules.instancenorm: InstanceNorm1d/2d/3d and their lazy forms."""
from __future__ import annotations

from ..._warn import warn
from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase


class _InstanceNorm(_NormBase):
    """Each (sample, channel) normalized with its own statistics; an input without the batch
    dimension is one sample. Off by default: the scale and shift, and running statistics."""
    spatial_dims = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        # a checkpoint from before version 1 kept running statistics the module does not track: refused
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                error_msgs.append("Unexpected running stats buffer(s) {names} for {klass} with track_running_stats="
                                  "False. If state_dict is a checkpoint saved before 0.4.0, this may be expected "
                                  "because {klass} does not track running stats by default since 0.4.0. Please remove "
                                  "these keys from state_dict. If the running stats are actually needed, instead set "
                                  "track_running_stats=True in {klass} to enable them. See the documentation of "
                                  "{klass} for details.".format(names=" and ".join(f'"{k}"' for k in keys),
                                                                 klass=klass))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        batched = self.spatial_dims + 2
        if input.ndim not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got {input.ndim}D input)")
        feature_dim = input.ndim - batched + 1   # the channels: dim 1, or 0 without the batch
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this warning by "
                 "not passing in num_features, which is not used because affine=False")
        if input.ndim == batched - 1:
            return self._normalized(input.unsqueeze(0)).squeeze(0)
        return self._normalized(input)

    def _normalized(self, input):
        use_stats = self.training or not self.track_running_stats
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias, use_stats,
                               self.momentum if self.momentum is not None else 0.1, self.eps)


class InstanceNorm1d(_InstanceNorm):
    spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    spatial_dims = 2


class InstanceNorm3d(_InstanceNorm):
    spatial_dims = 3


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    cls_to_become = InstanceNorm3d

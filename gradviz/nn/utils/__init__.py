"""gradviz.nn.utils: gradient clipping and skip_init, named as torch.nn.utils."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm  # noqa: F401
from .init import skip_init  # noqa: F401

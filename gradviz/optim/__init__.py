"""gradviz.optim: optimizers (named and numbered as torch.optim's) and lr_scheduler."""
from . import lr_scheduler  # noqa: F401
from .algorithms import SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop  # noqa: F401
from .optimizer import Optimizer  # noqa: F401

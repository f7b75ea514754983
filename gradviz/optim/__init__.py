"""gradviz.optim: optimizers (named and numbered as torch.optim's), lr_scheduler and swa_utils.

Its public names are torch.optim's: the modules that hold the classes are imported, then their
names deleted here (`from gradviz.optim.optimizer import Optimizer` still works), as torch does."""
from . import lr_scheduler, swa_utils  # noqa: F401
from .algorithms import (ASGD, SGD, Adadelta, Adafactor, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam,  # noqa: F401
                         RMSprop, Rprop)
from ._muon import Muon  # noqa: F401
from ._stateless import swap_in_optimizer_params_and_state  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .optimizer import Optimizer  # noqa: F401

del algorithms, lbfgs, optimizer  # noqa: F821

# torch.optim's own list (its order), for `from torch.optim import *`, less SparseAdam (sparse gradients)
__all__ = ["Adafactor", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "lr_scheduler", "Muon",
           "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "swap_in_optimizer_params_and_state",
           "swa_utils"]

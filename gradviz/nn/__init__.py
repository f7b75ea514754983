"""gradviz.nn: modules, parameters and the functional API, named as torch.nn."""
from . import functional, init, utils  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403  (every layer, as torch.nn exports them)
from . import modules, parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401

"""gradviz.nn: modules, parameters and the functional API, named as torch.nn."""
from . import functional  # noqa: F401
from .modules import (BCELoss, CrossEntropyLoss, Dropout, Flatten, GELU, LeakyReLU, Linear, LogSoftmax,  # noqa: F401
                      Module, MSELoss, NLLLoss, Parameter, ReLU, Sequential, Sigmoid, Softmax, Tanh)

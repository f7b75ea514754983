"""gradviz.nn: modules, parameters and the functional API, named as torch.nn."""
from . import functional, init, utils  # noqa: F401
from .modules import (BCELoss, BCEWithLogitsLoss, BatchNorm1d, CrossEntropyLoss, Dropout, ELU, Embedding,  # noqa: F401
                      Flatten, GELU, Hardsigmoid, Hardswish, Hardtanh, HuberLoss, Identity, KLDivLoss, L1Loss,
                      LayerNorm, LeakyReLU, Linear, LogSigmoid, LogSoftmax, Mish, Module, ModuleDict, ModuleList,
                      MSELoss, NLLLoss, Parameter, ParameterList, ReLU, ReLU6, SELU, Sequential, SiLU, Sigmoid,
                      SmoothL1Loss, Softmax, Softmin, Softplus, Softsign, Tanh)
from .layers import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d,  # noqa: F401
                     BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, Dropout1d, Dropout2d, Fold, GRU, GRUCell, GroupNorm,
                     InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                     LSTM, LSTMCell, MaxPool1d, MaxPool2d, MultiheadAttention, PixelShuffle, PixelUnshuffle, RMSNorm,
                     RNN, RNNCell, Unfold, Upsample, ZeroPad2d)

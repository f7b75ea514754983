"""torch.nn.modules: the layers, one module per family as torch lays them out, so a class's
__module__ (what a model saved whole records) is torch's path under gradviz."""
from ..parameter import Parameter  # noqa: F401  (imported from here by older code)
from .module import Module  # noqa: F401
from .lazy import LazyModuleMixin  # noqa: F401
from .linear import Bilinear, Identity, LazyLinear, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from .activation import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,  # noqa: F401
    LeakyReLU, LogSigmoid, LogSoftmax, Mish, MultiheadAttention, PReLU, ReLU, ReLU6, RReLU, SELU, Sigmoid,
    SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,  # noqa: F401
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
    LazyConvTranspose3d)
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,  # noqa: F401
    AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d,
    MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d,  # noqa: F401
    LazyBatchNorm3d)
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d,  # noqa: F401
    LazyInstanceNorm2d, LazyInstanceNorm3d)
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm  # noqa: F401
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss,  # noqa: F401
    GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss,
    MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss, TripletMarginWithDistanceLoss)
from .flatten import Flatten, Unflatten  # noqa: F401
from .fold import Fold, Unfold  # noqa: F401
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .channelshuffle import ChannelShuffle  # noqa: F401
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,  # noqa: F401
    ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d,
    ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: F401
    TransformerEncoder, TransformerEncoderLayer)

__all__ = [name for name in dir() if name[0].isupper() and name not in ("Parameter", "NonDynamicallyQuantizableLinear",
                                                                         "LazyModuleMixin")]

"""``tf.keras.layers``: the layer classes (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.engine.base_layer import Layer as Layer
from simdist.keras.engine.input_layer import InputLayer as InputLayer
from simdist.keras.engine.input_spec import InputSpec as InputSpec
from simdist.keras.layers import experimental as experimental
from simdist.keras.layers.activation import ELU as ELU
from simdist.keras.layers.activation import LeakyReLU as LeakyReLU
from simdist.keras.layers.activation import PReLU as PReLU
from simdist.keras.layers.activation import Softmax as Softmax
from simdist.keras.layers.activation import ThresholdedReLU as ThresholdedReLU
from simdist.keras.layers.attention import AdditiveAttention as AdditiveAttention
from simdist.keras.layers.attention import Attention as Attention
from simdist.keras.layers.conv1d import Conv1D as Conv1D
from simdist.keras.layers.conv_transpose import Conv1DTranspose as Conv1DTranspose
from simdist.keras.layers.conv_transpose import Conv2DTranspose as Conv2DTranspose
from simdist.keras.layers.convolutional import Conv2D as Conv2D
from simdist.keras.layers.convolutional3d import AveragePooling3D as AveragePooling3D
from simdist.keras.layers.convolutional3d import AvgPool3D as AvgPool3D
from simdist.keras.layers.convolutional3d import Conv3D as Conv3D
from simdist.keras.layers.convolutional3d import MaxPool3D as MaxPool3D
from simdist.keras.layers.convolutional3d import MaxPooling3D as MaxPooling3D
from simdist.keras.layers.core import Activation as Activation
from simdist.keras.layers.core import Dense as Dense
from simdist.keras.layers.core import Dropout as Dropout
from simdist.keras.layers.core import Flatten as Flatten
from simdist.keras.layers.core import ReLU as ReLU
from simdist.keras.layers.cropping import Cropping2D as Cropping2D
from simdist.keras.layers.depthwise import DepthwiseConv2D as DepthwiseConv2D
from simdist.keras.layers.depthwise import SeparableConv2D as SeparableConv2D
from simdist.keras.layers.depthwise1d import DepthwiseConv1D as DepthwiseConv1D
from simdist.keras.layers.depthwise1d import SeparableConv1D as SeparableConv1D
from simdist.keras.layers.dot import Dot as Dot
from simdist.keras.layers.dot import dot as dot
from simdist.keras.layers.einsum_dense import EinsumDense as EinsumDense
from simdist.keras.layers.embedding import Embedding as Embedding
from simdist.keras.layers.global_pooling import GlobalAveragePooling1D as GlobalAveragePooling1D
from simdist.keras.layers.global_pooling import GlobalAveragePooling2D as GlobalAveragePooling2D
from simdist.keras.layers.global_pooling import GlobalAveragePooling3D as GlobalAveragePooling3D
from simdist.keras.layers.global_pooling import GlobalMaxPooling1D as GlobalMaxPooling1D
from simdist.keras.layers.global_pooling import GlobalMaxPooling2D as GlobalMaxPooling2D
from simdist.keras.layers.global_pooling import GlobalMaxPooling3D as GlobalMaxPooling3D
from simdist.keras.layers.group_normalization import GroupNormalization as GroupNormalization
from simdist.keras.layers.group_normalization import UnitNormalization as UnitNormalization
from simdist.keras.layers.lambda_layer import Lambda as Lambda
from simdist.keras.layers.masking import Masking as Masking
from simdist.keras.layers.merging import Add as Add
from simdist.keras.layers.merging import Average as Average
from simdist.keras.layers.merging import Concatenate as Concatenate
from simdist.keras.layers.merging import Maximum as Maximum
from simdist.keras.layers.merging import Minimum as Minimum
from simdist.keras.layers.merging import Multiply as Multiply
from simdist.keras.layers.merging import Subtract as Subtract
from simdist.keras.layers.merging import add as add
from simdist.keras.layers.merging import average as average
from simdist.keras.layers.merging import concatenate as concatenate
from simdist.keras.layers.merging import maximum as maximum
from simdist.keras.layers.merging import minimum as minimum
from simdist.keras.layers.merging import multiply as multiply
from simdist.keras.layers.merging import subtract as subtract
from simdist.keras.layers.multi_head_attention import MultiHeadAttention as MultiHeadAttention
from simdist.keras.layers.noise import AlphaDropout as AlphaDropout
from simdist.keras.layers.noise import GaussianDropout as GaussianDropout
from simdist.keras.layers.noise import GaussianNoise as GaussianNoise
from simdist.keras.layers.noise import SpatialDropout1D as SpatialDropout1D
from simdist.keras.layers.noise import SpatialDropout2D as SpatialDropout2D
from simdist.keras.layers.normalization import BatchNormalization as BatchNormalization
from simdist.keras.layers.normalization import LayerNormalization as LayerNormalization
from simdist.keras.layers.pooling import AveragePooling2D as AveragePooling2D
from simdist.keras.layers.pooling import AvgPool2D as AvgPool2D
from simdist.keras.layers.pooling import MaxPool2D as MaxPool2D
from simdist.keras.layers.pooling import MaxPooling2D as MaxPooling2D
from simdist.keras.layers.preprocessing.category_encoding import (
    CategoryEncoding as CategoryEncoding,
)
from simdist.keras.layers.preprocessing.discretization import Discretization as Discretization
from simdist.keras.layers.preprocessing.hashing import Hashing as Hashing
from simdist.keras.layers.preprocessing.image_augmentation import (
    RandomBrightness as RandomBrightness,
)
from simdist.keras.layers.preprocessing.image_augmentation import RandomContrast as RandomContrast
from simdist.keras.layers.preprocessing.image_augmentation import RandomFlip as RandomFlip
from simdist.keras.layers.preprocessing.image_augmentation import RandomRotation as RandomRotation
from simdist.keras.layers.preprocessing.image_augmentation import (
    RandomTranslation as RandomTranslation,
)
from simdist.keras.layers.preprocessing.image_augmentation import RandomZoom as RandomZoom
from simdist.keras.layers.preprocessing.image_preprocessing import CenterCrop as CenterCrop
from simdist.keras.layers.preprocessing.image_preprocessing import RandomCrop as RandomCrop
from simdist.keras.layers.preprocessing.image_preprocessing import Resizing as Resizing
from simdist.keras.layers.preprocessing.lookup import IntegerLookup as IntegerLookup
from simdist.keras.layers.preprocessing.lookup import StringLookup as StringLookup
from simdist.keras.layers.preprocessing.numeric import Normalization as Normalization
from simdist.keras.layers.preprocessing.numeric import Rescaling as Rescaling
from simdist.keras.layers.preprocessing.text_vectorization import (
    TextVectorization as TextVectorization,
)
from simdist.keras.layers.reshaping import Permute as Permute
from simdist.keras.layers.reshaping import RepeatVector as RepeatVector
from simdist.keras.layers.reshaping import Reshape as Reshape
from simdist.keras.layers.reshaping import UpSampling1D as UpSampling1D
from simdist.keras.layers.reshaping import UpSampling2D as UpSampling2D
from simdist.keras.layers.reshaping import ZeroPadding1D as ZeroPadding1D
from simdist.keras.layers.reshaping import ZeroPadding2D as ZeroPadding2D
from simdist.keras.layers.rnn import GRU as GRU
from simdist.keras.layers.rnn import LSTM as LSTM
from simdist.keras.layers.rnn import RNN as RNN
from simdist.keras.layers.rnn import SimpleRNN as SimpleRNN
from simdist.keras.layers.rnn_cells import GRUCell as GRUCell
from simdist.keras.layers.rnn_cells import LSTMCell as LSTMCell
from simdist.keras.layers.rnn_cells import SimpleRNNCell as SimpleRNNCell
from simdist.keras.layers.rnn_stacked import StackedRNNCells as StackedRNNCells
from simdist.keras.layers.sync_batch_norm import SyncBatchNormalization as _SyncBatchNormalization
from simdist.keras.layers.wrappers import Bidirectional as Bidirectional
from simdist.keras.layers.wrappers import TimeDistributed as TimeDistributed

Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution3D = Conv3D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D
del _SyncBatchNormalization  # tf.keras.layers.experimental.SyncBatchNormalization


def __getattr__(name: str):
    raise missing_name("tf.keras.layers", name)


# registers the built-in layers' compute descriptions (simdist.core.compute_description)
from simdist.keras.layers import compute_rules as _compute_rules  # noqa: E402, F401
from simdist.keras.layers import compute_rules_elementwise as _compute_rules_elementwise  # noqa: E402, F401
from simdist.keras.layers import compute_rules_extra as _compute_rules_extra  # noqa: E402, F401
from simdist.keras.layers import compute_rules_image as _compute_rules_image  # noqa: E402, F401
from simdist.keras.layers import compute_rules_keras2 as _compute_rules_keras2  # noqa: E402, F401
from simdist.keras.layers import compute_rules_more as _compute_rules_more  # noqa: E402, F401

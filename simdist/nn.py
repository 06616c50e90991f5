"""``tf.nn``: activations, softmax, convolution, pooling, dropout, cross-entropies, loss scaling.

This module only re-exports; the ops live in ``simdist.core.ops``.
"""

from simdist import symbolic_dispatch as _symbolic_dispatch
from simdist.core.ops.conv1d_ops import conv1d as conv1d
from simdist.core.ops.conv3d_ops import avg_pool3d as avg_pool3d
from simdist.core.ops.conv3d_ops import conv3d as conv3d
from simdist.core.ops.conv3d_ops import max_pool3d as max_pool3d
from simdist.core.ops.conv_ops import conv2d as conv2d
from simdist.core.ops.conv_ops import convolution as convolution
from simdist.core.ops.conv_transpose_ops import conv2d_transpose as conv2d_transpose
from simdist.core.ops.depthwise_ops import depthwise_conv2d as depthwise_conv2d
from simdist.core.ops.depthwise_ops import separable_conv2d as separable_conv2d
from simdist.core.ops.linalg_ops import l2_normalize as l2_normalize
from simdist.core.ops.nn_losses import compute_average_loss as compute_average_loss
from simdist.core.ops.nn_losses import scale_regularization_loss as scale_regularization_loss
from simdist.core.ops.nn_losses import (
    sigmoid_cross_entropy_with_logits as sigmoid_cross_entropy_with_logits,
)
from simdist.core.ops.nn_losses import (
    softmax_cross_entropy_with_logits as softmax_cross_entropy_with_logits,
)
from simdist.core.ops.nn_losses import (
    sparse_softmax_cross_entropy_with_logits as sparse_softmax_cross_entropy_with_logits,
)
from simdist.core.ops.nn_ops import bias_add as bias_add
from simdist.core.ops.nn_ops import dropout as dropout
from simdist.core.ops.nn_ops import elu as elu
from simdist.core.ops.nn_ops import l2_loss as l2_loss
from simdist.core.ops.nn_ops import leaky_relu as leaky_relu
from simdist.core.ops.nn_ops import log_softmax as log_softmax
from simdist.core.ops.nn_ops import moments as moments
from simdist.core.ops.nn_ops import relu as relu
from simdist.core.ops.nn_ops import relu6 as relu6
from simdist.core.ops.nn_ops import selu as selu
from simdist.core.ops.nn_ops import sigmoid as sigmoid
from simdist.core.ops.nn_ops import silu as silu
from simdist.core.ops.nn_ops import softmax as softmax
from simdist.core.ops.nn_ops import softplus as softplus
from simdist.core.ops.nn_ops import softsign as softsign
from simdist.core.ops.nn_ops import swish as swish
from simdist.core.ops.nn_ops import tanh as tanh
from simdist.core.ops.normalization_ops import batch_normalization as batch_normalization
from simdist.core.ops.normalization_ops import gelu as gelu
from simdist.core.ops.pool_ops import avg_pool as avg_pool
from simdist.core.ops.pool_ops import avg_pool2d as avg_pool2d
from simdist.core.ops.pool_ops import max_pool as max_pool
from simdist.core.ops.pool_ops import max_pool2d as max_pool2d
from simdist.core.ops.sort_ops import top_k as top_k
from simdist.distribute.sharded_variable import embedding_lookup as embedding_lookup

_symbolic_dispatch.install(globals(), "nn")  # on KerasTensors the ops make Keras op layers

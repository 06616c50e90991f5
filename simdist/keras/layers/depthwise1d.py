"""``DepthwiseConv1D`` and ``SeparableConv1D`` over ``[batch, steps, channels]``, as Keras 2.

They run as their 2-D ops over a height of 1 (inputs ``[batch, 1, steps, channels]``, the
kernels with a leading axis of 1), as TF's 1-D convolutions do; the layers' own kernels have
Keras's shapes: ``depthwise_kernel`` ``(kernel_size, in, depth_multiplier)`` and
``pointwise_kernel`` ``(1, in * depth_multiplier, filters)``. ``padding='causal'`` (for
``SeparableConv1D``; Keras 2 refuses it for ``DepthwiseConv1D``) pads ``(kernel_size - 1) *
dilation_rate`` zeros on the left only.
"""

from __future__ import annotations

from simdist.core.ops import array_ops
from simdist.core.ops.depthwise_ops import depthwise_conv2d, separable_conv2d
from simdist.core.tensor import Tensor
from simdist.keras.layers.conv1d import _one_int
from simdist.keras.layers.conv1d import _padding as _padding_1d
from simdist.keras.layers.depthwise import DepthwiseConv2D, SeparableConv2D

__all__ = ["DepthwiseConv1D", "SeparableConv1D"]


class _OneD:
    """The 1-D reading of the arguments and the height-1 call of the 2-D op."""

    _RANK = 1
    _LAYOUT = "(batch, steps, channels)"
    _sizes = staticmethod(_one_int)
    _padding = staticmethod(_padding_1d)  # 'valid' / 'same' / 'causal'

    def _as_images(self, inputs) -> tuple[Tensor, str]:
        padding = self.padding.upper()
        if self.padding == "causal":
            left = (self.kernel_size[0] - 1) * self.dilation_rate[0]
            inputs = array_ops.pad(inputs, [[0, 0], [left, 0], [0, 0]])
            padding = "VALID"
        return array_ops.expand_dims(inputs, 1), padding

    def _op_args(self) -> dict:
        return {"strides": (1, self.strides[0]), "dilations": (1, self.dilation_rate[0])}


class DepthwiseConv1D(_OneD, DepthwiseConv2D):
    """Each input channel convolved with its own ``depth_multiplier`` filters, over steps.

    Raises:
        ValueError: bad ``kernel_size``, ``strides``, ``padding`` or ``depth_multiplier``; at
            call, an input of another rank or channel count than the layer was built for.
    """

    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=1,
        **kwargs,
    ) -> None:
        super().__init__(
            kernel_size,
            strides=strides,
            padding=padding,
            depth_multiplier=depth_multiplier,
            data_format=data_format,
            dilation_rate=dilation_rate,
            **kwargs,
        )

    @staticmethod
    def _padding(value) -> str:
        padding = _padding_1d(value)
        if padding == "causal":  # as Keras 2's base Conv refuses it
            raise ValueError("Causal padding is only supported for `Conv1D`and `SeparableConv1D`.")
        return padding

    def _conv(self, inputs) -> Tensor:
        images, padding = self._as_images(inputs)
        kernel = array_ops.expand_dims(self.depthwise_kernel, 0)
        out = depthwise_conv2d(images, kernel, padding=padding, **self._op_args())
        return array_ops.squeeze(out, [1])


class SeparableConv1D(_OneD, SeparableConv2D):
    """Depthwise 1-D convolution, then a pointwise (size-1) convolution to ``filters``.

    Raises:
        ValueError: as ``DepthwiseConv1D``, or bad ``filters``.
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        depth_multiplier=1,
        **kwargs,
    ) -> None:
        super().__init__(
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            depth_multiplier=depth_multiplier,
            **kwargs,
        )

    def _conv(self, inputs) -> Tensor:
        images, padding = self._as_images(inputs)
        depthwise = array_ops.expand_dims(self.depthwise_kernel, 0)
        pointwise = array_ops.expand_dims(self.pointwise_kernel, 0)
        out = separable_conv2d(images, depthwise, pointwise, padding=padding, **self._op_args())
        return array_ops.squeeze(out, [1])

"""``DepthwiseConv2D`` and ``SeparableConv2D``: per-channel convolutions, as Keras 2.

``DepthwiseConv2D`` convolves each input channel with its own ``depth_multiplier`` filters
(``depthwise_kernel`` ``(kh, kw, in, depth_multiplier)``; output channel ``c * multiplier +
m``). ``SeparableConv2D`` follows that with a 1x1 convolution (``pointwise_kernel`` ``(1, 1,
in * depth_multiplier, filters)``), as ``tf.nn.separable_conv2d``. Both are channels_last;
weights are created and named as Keras creates them (``depthwise_kernel``,
``pointwise_kernel``, ``bias``, in that order).
"""

from __future__ import annotations

from simdist.core.ops import nn_ops
from simdist.core.ops.depthwise_ops import depthwise_conv2d, separable_conv2d
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras import activations, constraints, initializers, regularizers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, int_pair, padding_name, positive_int
from simdist.keras.layers.convolutional import conv_output_length

__all__ = ["DepthwiseConv2D", "SeparableConv2D"]


def _serialized(getter_module, value):
    return None if value is None else getter_module.serialize(value)


class _DepthwiseBase(Layer):
    """Arguments, the depthwise kernel, the input check and the config they share.

    A subclass names its spatial rank (``_RANK``), how it reads the sizes (``_sizes``) and
    ``padding`` (``_padding``: the 2-D layers keep the op's ``'SAME'``/``'VALID'``, the 1-D
    ones Keras's lower-case names with ``'causal'``) and the layout its errors show.
    """

    _RANK = 2
    _LAYOUT = "(batch, height, width, channels)"
    _sizes = staticmethod(int_pair)
    _padding = staticmethod(padding_name)

    def __init__(
        self,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ) -> None:
        groups = kwargs.pop("groups", 1)  # in Keras 2's config of these layers, always 1
        super().__init__(**kwargs)
        name = type(self).__name__
        if groups != 1:
            raise NotImplementedError(f"simdist's {name} supports groups=1 only.")
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"simdist's {name} supports data_format='channels_last'.")
        self.kernel_size = self._sizes(kernel_size, "kernel_size")
        self.strides = self._sizes(strides, "strides")
        self.padding = self._padding(padding)
        self.depth_multiplier = positive_int(depth_multiplier, "depth_multiplier")
        self.dilation_rate = self._sizes(dilation_rate, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` is not compatible with `dilation_rate > 1`.")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self._channels = None

    def _check_build_shape(self, input_shape) -> int:
        shape = as_shape(input_shape)
        if shape.rank != self._RANK + 2 or shape[-1] is None:
            raise ValueError(
                f"{type(self).__name__} expects inputs of shape {self._LAYOUT} with a known "
                f"channel count; received input_shape={shape}."
            )
        self._channels = int(shape[-1])
        return self._channels

    def _add_depthwise_kernel(self, channels: int) -> None:
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            shape=[*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )

    def _add_bias(self, size: int) -> None:
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[size],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=self._RANK + 2, axes={-1: self._channels})
        outputs = self._conv(inputs)
        if self.bias is not None:
            outputs = nn_ops.bias_add(outputs, self.bias)
        outputs = self.activation(outputs)
        if self.activity_regularizer is None:
            return outputs
        return regularizers.record_activity(self, outputs)

    def _conv(self, inputs) -> Tensor:
        raise NotImplementedError

    def _out_channels(self) -> int:
        raise NotImplementedError

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        padding = "SAME" if self.padding == "causal" else self.padding.upper()
        sizes = [
            conv_output_length(size, k, padding, s, 1 if self.padding == "causal" else d)
            for size, k, s, d in zip(
                dims[1:-1], self.kernel_size, self.strides, self.dilation_rate, strict=True
            )
        ]
        return TensorShape([dims[0], *sizes, self._out_channels()])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding.lower(),
            "depth_multiplier": self.depth_multiplier,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "depthwise_regularizer": _serialized(regularizers, self.depthwise_regularizer),
            "bias_regularizer": _serialized(regularizers, self.bias_regularizer),
            "activity_regularizer": _serialized(regularizers, self.activity_regularizer),
            "depthwise_constraint": _serialized(constraints, self.depthwise_constraint),
            "bias_constraint": _serialized(constraints, self.bias_constraint),
        }


class DepthwiseConv2D(_DepthwiseBase):
    """``activation(depthwise_conv2d(inputs, depthwise_kernel) + bias)``.

    Raises:
        ValueError: bad ``kernel_size``, ``strides``, ``padding`` or ``depth_multiplier``;
            at call, an input of another rank or channel count than the layer was built for.
        NotImplementedError: ``data_format='channels_first'``.
    """

    def build(self, input_shape) -> None:
        channels = self._check_build_shape(input_shape)
        self._add_depthwise_kernel(channels)
        self._add_bias(channels * self.depth_multiplier)
        self.built = True

    def _conv(self, inputs) -> Tensor:
        return depthwise_conv2d(
            inputs,
            self.depthwise_kernel,
            strides=self.strides,
            padding=self.padding,
            dilations=self.dilation_rate,
        )

    def _out_channels(self) -> int:
        return None if self._channels is None else self._channels * self.depth_multiplier


class SeparableConv2D(_DepthwiseBase):
    """Depthwise convolution, then a 1x1 convolution to ``filters`` channels, then bias and
    activation.

    Raises:
        ValueError: as ``DepthwiseConv2D``, or bad ``filters``.
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ) -> None:
        # Keras 2's config of this layer also holds its Conv base's kernel_* options, which
        # the layer never uses (its kernels are the depthwise and pointwise ones)
        for unused in ("kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            kwargs.pop(unused, None)
        super().__init__(
            kernel_size,
            strides=strides,
            padding=padding,
            depth_multiplier=depth_multiplier,
            data_format=data_format,
            dilation_rate=dilation_rate,
            activation=activation,
            use_bias=use_bias,
            depthwise_initializer=depthwise_initializer,
            bias_initializer=bias_initializer,
            depthwise_regularizer=depthwise_regularizer,
            bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            depthwise_constraint=depthwise_constraint,
            bias_constraint=bias_constraint,
            **kwargs,
        )
        self.filters = positive_int(filters, "filters")
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape) -> None:
        channels = self._check_build_shape(input_shape)
        self._add_depthwise_kernel(channels)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            shape=[*(1,) * self._RANK, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        self._add_bias(self.filters)
        self.built = True

    def _conv(self, inputs) -> Tensor:
        return separable_conv2d(
            inputs,
            self.depthwise_kernel,
            self.pointwise_kernel,
            strides=self.strides,
            padding=self.padding,
            dilations=self.dilation_rate,
        )

    def _out_channels(self) -> int:
        return self.filters

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filters": self.filters,
            "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
            "pointwise_regularizer": _serialized(regularizers, self.pointwise_regularizer),
            "pointwise_constraint": _serialized(constraints, self.pointwise_constraint),
        }

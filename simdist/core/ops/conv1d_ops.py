"""``tf.nn.conv1d``: a 1-D convolution as TF computes it, a 2-D one over a height of 1.

TF's ``conv1d`` inserts a unit height axis (``[batch, 1, width, channels]`` and a filter
``[1, width, in, out]``), calls ``conv2d`` and removes the axis again; simdist does the same
with its own ``expand_dims``, ``conv2d`` and ``squeeze``, so the gradients are theirs.
``"NCW"`` inputs are transposed to ``"NWC"`` and back.
"""

from __future__ import annotations

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops
from simdist.core.ops.conv_ops import conv2d
from simdist.core.tensor import Tensor

__all__ = ["conv1d"]


def _width_param(value, what: str) -> list[int]:
    """A stride or dilation as conv2d's ``[1, 1, w, 1]`` (an int, or 1 or 3 ints as TF)."""
    items = [value] if isinstance(value, int) else list(value)
    if len(items) == 3:
        items = [items[1]]
    if len(items) != 1:
        raise ValueError(f"{what} must be an int or a list of 1 or 3 ints, got {value!r}.")
    return [1, 1, int(items[0]), 1]


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None,
           use_cudnn_on_gpu=None) -> Tensor:  # fmt: skip
    """Convolve ``input`` (``[batch, width, in_channels]``) with ``filters``
    (``[filter_width, in_channels, out_channels]``).

    Raises:
        ValueError: a ``data_format`` other than ``"NWC"``/``"NCW"``, or a bad stride.
        InvalidArgumentError: as ``conv2d`` (channels that do not match, a bad padding).
    """
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}.")
    x = convert_to_tensor(input)
    if data_format == "NCW":
        x = array_ops.transpose(x, [0, 2, 1])
    images = array_ops.expand_dims(x, -3)
    kernel = array_ops.expand_dims(filters, 0)
    y = conv2d(
        images,
        kernel,
        _width_param(stride, "stride"),
        padding,
        "NHWC",
        None if dilations is None else _width_param(dilations, "dilations"),
    )
    y = array_ops.squeeze(y, axis=-3)
    return array_ops.transpose(y, [0, 2, 1]) if data_format == "NCW" else y

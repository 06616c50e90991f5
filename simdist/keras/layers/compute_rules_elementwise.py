"""Compute descriptions of the element-wise layers added for Keras 2's activation and noise
names (read by ``cost``), counted as ``compute_rules`` counts:

* LeakyReLU / ELU / ThresholdedReLU: one element-wise kernel forward, one (reading the input
  and the output gradient) backward; ELU adds an ``exp`` per element, counted as one FLOP.
* PReLU: one kernel reading the input and ``alpha``; backward the input gradient and the
  ``alpha`` gradient (a product, then a sum over the batch and the shared axes).
* Discretization (``int`` output): a binary search per value, ``ceil(log2(bins + 1))``
  comparisons; no gradient (its output is integer). The encoded modes: unpriced.
* Softmax: 5 FLOPs per element forward (max, subtract, exp, sum, divide), 3 backward, plus
  one kernel for the mask when the layer is given one (not known here: not counted).
"""

from __future__ import annotations

import math

from simdist.core.compute_description import (
    ComputeDescription,
    Kernel,
    elementwise_kernel,
    register_compute_rule,
)
from simdist.keras.layers.activation import ELU, LeakyReLU, PReLU, Softmax, ThresholdedReLU
from simdist.keras.layers.preprocessing.discretization import Discretization

__all__: list[str] = []


def _elementwise(kind: str, shape, batch: int, size: int, flops_per_element: int = 1):
    elements = batch * math.prod(shape)
    forward = elementwise_kernel(kind, elements, size, reads=1)
    backward = elementwise_kernel(f"{kind}_grad", elements, size, reads=2)
    if flops_per_element != 1:
        forward = Kernel(kind, float(elements * flops_per_element), forward.nbytes)
    return ComputeDescription(tuple(shape), (), (forward,), (), (backward,))


@register_compute_rule(LeakyReLU)
def _leaky_relu(layer, shape, batch, size):
    return _elementwise("leaky_relu", shape, batch, size)


@register_compute_rule(ELU)
def _elu(layer, shape, batch, size):
    return _elementwise("elu", shape, batch, size, flops_per_element=2)


@register_compute_rule(ThresholdedReLU)
def _thresholded_relu(layer, shape, batch, size):
    return _elementwise("thresholded_relu", shape, batch, size)


@register_compute_rule(Softmax)
def _softmax(layer, shape, batch, size):
    elements = batch * math.prod(shape)
    forward = Kernel("softmax", 5.0 * elements, 2.0 * elements * size)
    backward = Kernel("softmax_grad", 3.0 * elements, 3.0 * elements * size)
    return ComputeDescription(tuple(shape), (), (forward,), (), (backward,))


@register_compute_rule(PReLU)
def _prelu(layer, shape, batch, size):
    alpha_shape = list(shape)
    for axis in layer.shared_axes or ():
        alpha_shape[axis - 1] = 1
    alpha = math.prod(alpha_shape)
    elements = batch * math.prod(shape)
    forward = Kernel("prelu", 2.0 * elements, float((2 * elements + alpha) * size))
    alpha_grad = Kernel("prelu_alpha_grad", 2.0 * elements, float((2 * elements + alpha) * size))
    input_grad = Kernel("prelu_input_grad", 2.0 * elements, float((3 * elements + alpha) * size))
    return ComputeDescription(tuple(shape), (alpha,), (forward,), (alpha_grad,), (input_grad,))


@register_compute_rule(Discretization)
def _discretization(layer, shape, batch, size):
    if layer.output_mode != "int":
        return None
    elements = batch * math.prod(shape)
    searches = max(1, math.ceil(math.log2(len(layer.bin_boundaries) + 1)))
    forward = Kernel("bucketize", float(searches * elements), float(2 * elements * size))
    return ComputeDescription(tuple(shape), (), (forward,))

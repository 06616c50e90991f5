"""``EinsumDense``: ``activation(einsum(equation, inputs, kernel) + bias)``.

The equation is ``ab,bc->ac`` style, optionally with ``...`` leading both the input and the
output (``...b,bc->...c``) or trailing them (``ab...,bc->ac...``); the elided axes are the
input's. ``output_shape`` gives the output's dimensions after the batch axis (without the
elided ones); each kernel dimension is read from the input where its letter is there, else
from the output. ``bias_axes`` (letters of the output) gives a bias over those axes,
broadcast over the others: its shape runs from the first bias letter to the end of the output
spec, with 1 at letters not in ``bias_axes`` (and 1 per trailing elided axis), as Keras 2.
"""

from __future__ import annotations

import re

from simdist.core.ops import einsum_ops, math_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras import activations, constraints, initializers, regularizers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._weights import add_kernel_and_bias

__all__ = ["EinsumDense", "analyze_einsum"]

_FORMS = (
    (re.compile(r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)"), False),
    (re.compile(r"0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)"), True),
    (re.compile(r"([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0"), False),
)


def analyze_einsum(equation: str, bias_axes, input_shape: list, partial_output: list):
    """``(kernel_shape, bias_shape or None, full_output_shape)`` of an EinsumDense.

    Raises:
        ValueError: an equation of another form, an output letter found in neither input nor
            kernel, a kernel letter found in neither input nor output, an input/output size
            mismatch on a shared letter, a bias letter not in the output.
    """
    plain = equation.replace("...", "0")
    match, left_elided = None, False
    for pattern, elided_first in _FORMS:
        match = pattern.match(plain)
        if match:
            left_elided = elided_first
            break
    if match is None:
        raise ValueError(
            f"Invalid einsum equation '{equation}'. Equations must be in the form "
            "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]...."
        )
    in_spec, kernel_spec, out_spec = match.groups()
    elided = len(input_shape) - len(in_spec)
    output = [input_shape[0], *partial_output]
    if elided > 0 and left_elided:
        for i in range(1, elided):
            output.insert(1, input_shape[i])
    elif elided > 0:
        output.extend(input_shape[len(input_shape) - elided :])
    if left_elided:
        in_index = {d: i + elided - len(input_shape) for i, d in enumerate(in_spec)}
        out_index = {d: i + elided for i, d in enumerate(out_spec)}
    else:
        in_index = {d: i for i, d in enumerate(in_spec)}
        out_index = {d: i for i, d in enumerate(out_spec)}
    for d in in_spec:
        if d in out_index and output[out_index[d]] not in (None, input_shape[in_index[d]]):
            raise ValueError(
                f"Input shape and output shape do not match at shared dimension '{d}'. Input "
                f"shape is {input_shape[in_index[d]]}, and output shape is "
                f"{output[out_index[d]]}."
            )
    for d in out_spec:
        if d not in in_spec and d not in kernel_spec:
            raise ValueError(
                f"Dimension '{d}' was specified in the output '{out_spec}' but has no "
                f"corresponding dim in the input spec '{in_spec}' or weight spec '{kernel_spec}'"
            )
    kernel = []
    for d in kernel_spec:
        if d in in_index:
            kernel.append(input_shape[in_index[d]])
        elif d in out_index:
            kernel.append(output[out_index[d]])
        else:
            raise ValueError(
                f"Weight dimension '{d}' did not have a match in either the input spec "
                f"'{in_spec}' or the output spec '{out_spec}'. For this layer, the weight must "
                "be fully specified."
            )
    bias = None
    if bias_axes is not None:
        lead = elided if left_elided else 0
        sizes = {d: output[i + lead] for i, d in enumerate(out_spec)}
        for d in bias_axes:
            if d not in out_spec:
                raise ValueError(
                    f"Bias dimension '{d}' was requested, but is not part of the output spec "
                    f"'{out_spec}'"
                )
        first = min(out_spec.find(d) for d in bias_axes)
        bias = [sizes[d] if d in bias_axes else 1 for d in out_spec[first:]]
        if not left_elided:
            bias.extend([1] * max(elided, 0))
    return kernel, bias, output


class EinsumDense(Layer):
    """A dense layer of any einsum contraction (see the module docstring).

    Raises:
        ValueError: at build, what :func:`analyze_einsum` raises.
    """

    def __init__(
        self,
        equation,
        output_shape,
        activation=None,
        bias_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.equation = equation
        if isinstance(output_shape, int):
            self.partial_output_shape = [output_shape]
        else:
            self.partial_output_shape = list(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.full_output_shape = None

    def build(self, input_shape) -> None:
        dims = as_shape(input_shape).as_list()
        kernel, bias, self.full_output_shape = analyze_einsum(
            self.equation, self.bias_axes, dims, self.partial_output_shape
        )
        add_kernel_and_bias(self, kernel, bias, use_bias=bias is not None)
        self.built = True

    def call(self, inputs) -> Tensor:
        out = einsum_ops.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            out = math_ops.add(out, self.bias)
        out = self.activation(out)
        if self.activity_regularizer is None:
            return out
        return regularizers.record_activity(self, out)

    def compute_output_shape(self, input_shape) -> TensorShape:
        if self.full_output_shape is None:
            dims = as_shape(input_shape).as_list()
            self.full_output_shape = analyze_einsum(
                self.equation, self.bias_axes, dims, self.partial_output_shape
            )[2]
        return TensorShape(self.full_output_shape)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "output_shape": self.partial_output_shape,
            "equation": self.equation,
            "activation": activations.serialize(self.activation),
            "bias_axes": self.bias_axes,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            **regularizers.penalties_config(self),
        }

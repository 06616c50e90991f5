"""One time step of Keras 2's recurrent cells: ``SimpleRNNCell``, ``LSTMCell``, ``GRUCell``.

Each cell holds ``kernel`` (inputs -> gates), ``recurrent_kernel`` (state -> gates) and
``bias``, and maps ``(x_t, states)`` to ``(output, new_states)``:

* SimpleRNN: ``h = activation(x @ W + b + h_prev @ U)``.
* LSTM (gates in the order i, f, c, o; Keras's implementation 2):
  ``z = x @ W + h_prev @ U + b``; ``i = σ(z_i)``, ``f = σ(z_f)``,
  ``c = f * c_prev + i * tanh(z_c)``, ``o = σ(z_o)``, ``h = o * tanh(c)``; states ``[h, c]``.
  ``unit_forget_bias=True`` starts the forget bias at 1.
* GRU (gates z, r, h). ``reset_after=True`` (Keras 2's default): ``bias`` is ``(2, 3u)``,
  input and recurrent halves; ``x_* = x @ W + b_in``, ``r_* = h_prev @ U + b_rec``;
  ``z = σ(x_z + r_z)``, ``r = σ(x_r + r_r)``, ``hh = tanh(x_h + r * r_h)``.
  ``reset_after=False``: ``hh = tanh(x_h + (r * h_prev) @ U_h)``, one bias of ``(3u,)``.
  Then ``h = z * h_prev + (1 - z) * hh``.

σ is ``recurrent_activation`` (``'sigmoid'``), tanh is ``activation``. Dropout inside the
cell (``dropout``/``recurrent_dropout`` > 0) is not yet in simdist and raises.
"""

from __future__ import annotations

import numpy as np

from simdist.core.ops import math_ops, slicing_ops
from simdist.keras import activations, initializers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import positive_int
from simdist.keras.layers._weights import weight_options

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell"]


def _columns(x, start: int, stop: int):
    return slicing_ops.getitem(x, (slice(None), slice(start, stop)))


class _Cell(Layer):
    _GATES = 1

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        **kwargs,
    ) -> None:
        kwargs.pop("implementation", None)
        super().__init__(**kwargs)
        if dropout or recurrent_dropout:
            raise NotImplementedError(
                f"{type(self).__name__}: dropout and recurrent_dropout inside a recurrent cell "
                "are not yet in simdist; apply tf.keras.layers.Dropout to the inputs or outputs."
            )
        self.units = positive_int(units, "units")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self._options = weight_options(
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
        )
        self.dropout, self.recurrent_dropout = 0.0, 0.0

    @property
    def state_size(self):
        return self.units

    def _bias_shape(self) -> list[int]:
        return [self._GATES * self.units]

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape) -> None:
        features = int(input_shape[-1])
        width = self._GATES * self.units
        self.kernel = self.add_weight(
            "kernel",
            shape=[features, width],
            initializer=self.kernel_initializer,
            regularizer=self._options["kernel_regularizer"],
            constraint=self._options["kernel_constraint"],
        )
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel",
            shape=[self.units, width],
            initializer=self.recurrent_initializer,
            regularizer=self._options["recurrent_regularizer"],
            constraint=self._options["recurrent_constraint"],
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=self._bias_shape(),
                initializer=self._bias_initializer(),
                regularizer=self._options["bias_regularizer"],
                constraint=self._options["bias_constraint"],
            )
        self.built = True

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "dropout": 0.0,
            "recurrent_dropout": 0.0,
            **self._options.config(),
        }


class SimpleRNNCell(_Cell):
    """``h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)``."""

    def __init__(self, units, activation="tanh", **kwargs) -> None:
        super().__init__(units, activation=activation, **kwargs)

    def call(self, inputs, states, training=None):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        h = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            h = math_ops.add(h, self.bias)
        output = self.activation(math_ops.add(h, math_ops.matmul(prev, self.recurrent_kernel)))
        return output, [output]

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("recurrent_activation")
        return config


class _UnitForgetBias(initializers.Initializer):
    """LSTM bias: ``bias_initializer`` for i, c, o; ones for the forget gate."""

    def __init__(self, base, units: int) -> None:
        self.base, self.units = base, units

    def __call__(self, shape, dtype=None, **kwargs):
        u = self.units
        base = np.asarray(self.base((u,), dtype=dtype))
        other = np.asarray(self.base((2 * u,), dtype=dtype))
        return np.concatenate([base, np.ones((u,), base.dtype), other])


class LSTMCell(_Cell):
    """Long short-term memory (gates i, f, c, o); states ``[h, c]``."""

    _GATES = 4

    def __init__(self, units, unit_forget_bias=True, **kwargs) -> None:
        super().__init__(units, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_initializer(self):
        if self.unit_forget_bias:
            return _UnitForgetBias(self.bias_initializer, self.units)
        return self.bias_initializer

    def call(self, inputs, states, training=None):
        h_prev, c_prev = states
        z = math_ops.add(
            math_ops.matmul(inputs, self.kernel), math_ops.matmul(h_prev, self.recurrent_kernel)
        )
        if self.bias is not None:
            z = math_ops.add(z, self.bias)
        u = self.units
        i = self.recurrent_activation(_columns(z, 0, u))
        f = self.recurrent_activation(_columns(z, u, 2 * u))
        c = math_ops.add(
            math_ops.multiply(f, c_prev),
            math_ops.multiply(i, self.activation(_columns(z, 2 * u, 3 * u))),
        )
        o = self.recurrent_activation(_columns(z, 3 * u, 4 * u))
        h = math_ops.multiply(o, self.activation(c))
        return h, [h, c]

    def get_config(self) -> dict:
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


class GRUCell(_Cell):
    """Gated recurrent unit (gates z, r, h); ``reset_after=True`` by default (Keras 2)."""

    _GATES = 3

    def __init__(self, units, reset_after=True, **kwargs) -> None:
        super().__init__(units, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self) -> list[int]:
        return [2, 3 * self.units] if self.reset_after else [3 * self.units]

    def call(self, inputs, states, training=None):
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        u = self.units
        x = math_ops.matmul(inputs, self.kernel)
        input_bias = recurrent_bias = None
        if self.bias is not None:
            if self.reset_after:
                input_bias = slicing_ops.getitem(self.bias, 0)
                recurrent_bias = slicing_ops.getitem(self.bias, 1)
            else:
                input_bias = self.bias
        if input_bias is not None:
            x = math_ops.add(x, input_bias)
        if self.reset_after:
            inner = math_ops.matmul(h_prev, self.recurrent_kernel)
            if recurrent_bias is not None:
                inner = math_ops.add(inner, recurrent_bias)
            z = self.recurrent_activation(math_ops.add(_columns(x, 0, u), _columns(inner, 0, u)))
            r = self.recurrent_activation(
                math_ops.add(_columns(x, u, 2 * u), _columns(inner, u, 2 * u))
            )
            recurrent_h = math_ops.multiply(r, _columns(inner, 2 * u, 3 * u))
        else:
            inner = math_ops.matmul(h_prev, _columns(self.recurrent_kernel, 0, 2 * u))
            z = self.recurrent_activation(math_ops.add(_columns(x, 0, u), _columns(inner, 0, u)))
            r = self.recurrent_activation(
                math_ops.add(_columns(x, u, 2 * u), _columns(inner, u, 2 * u))
            )
            recurrent_h = math_ops.matmul(
                math_ops.multiply(r, h_prev), _columns(self.recurrent_kernel, 2 * u, 3 * u)
            )
        hh = self.activation(math_ops.add(_columns(x, 2 * u, 3 * u), recurrent_h))
        h = math_ops.add(
            math_ops.multiply(z, h_prev), math_ops.multiply(math_ops.subtract(1.0, z), hh)
        )
        return h, [h]

    def get_config(self) -> dict:
        return {**super().get_config(), "reset_after": self.reset_after}

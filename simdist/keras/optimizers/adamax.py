"""``tf.keras.optimizers.Adamax``: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Keras 2's Adamax update at step ``t`` (1 for the first step)::

    m += (g - m) * (1 - beta_1)
    u = max(beta_2 * u, abs(g))
    w -= lr * m / ((1 - beta_1 ** t) * (u + epsilon))
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        name="Adamax",
        **kwargs,
    ) -> None:
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self.beta_1 = numeric_hyperparameter(name, "beta_1", beta_1)
        self.beta_2 = numeric_hyperparameter(name, "beta_2", beta_2)
        self.epsilon = numeric_hyperparameter(name, "epsilon", epsilon)

    def _slot_names(self) -> tuple[str, ...]:
        return ("m", "u")

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        t = dtype(int(self._iterations.numpy()) + 1)
        m = _array(slots["m"])
        m = m + (grad - m) * dtype(1 - self.beta_1)
        u = np.maximum(dtype(self.beta_2) * _array(slots["u"]), np.abs(grad))
        slots["m"].assign(make_tensor(m))
        slots["u"].assign(make_tensor(u))
        beta_1_power = np.power(dtype(self.beta_1), t)
        denominator = (dtype(1) - beta_1_power) * (u + dtype(self.epsilon))
        var.assign_sub(make_tensor((lr * m) / denominator))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
        }

"""``tf.keras.optimizers.Adadelta``: steps scaled by running RMS of gradients and updates."""

from __future__ import annotations

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Keras 2's Adadelta update (``rms(x) = sqrt(x + epsilon)``)::

    accumulated_grad = rho * accumulated_grad + (1 - rho) * g * g
    delta = -rms(accumulated_delta_var) * g / rms(accumulated_grad)
    accumulated_delta_var = rho * accumulated_delta_var + (1 - rho) * delta * delta
    w += lr * delta
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta", **kwargs):
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self.rho = numeric_hyperparameter(name, "rho", rho)
        self.epsilon = numeric_hyperparameter(name, "epsilon", epsilon)

    def _slot_names(self) -> tuple[str, ...]:
        return ("accumulated_grad", "accumulated_delta_var")

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        rho, one_minus_rho, eps = dtype(self.rho), dtype(1 - self.rho), dtype(self.epsilon)
        accumulated = rho * _array(slots["accumulated_grad"]) + one_minus_rho * grad * grad
        slots["accumulated_grad"].assign(make_tensor(accumulated))
        previous = _array(slots["accumulated_delta_var"])
        delta = -np.sqrt(previous + eps) * grad / np.sqrt(accumulated + eps)
        slots["accumulated_delta_var"].assign(
            make_tensor(rho * previous + one_minus_rho * delta * delta)
        )
        var.assign_add(make_tensor(lr * delta))

    def get_config(self) -> dict:
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}

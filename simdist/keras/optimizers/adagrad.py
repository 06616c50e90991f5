"""``tf.keras.optimizers.Adagrad``: per-element learning rates from summed squared gradients."""

from __future__ import annotations

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Keras 2's Adagrad update::

        accumulator += g * g                       # starts at initial_accumulator_value
        w -= lr * g / sqrt(accumulator + epsilon)

    Raises:
        ValueError: a negative ``initial_accumulator_value``.
    """

    def __init__(
        self,
        learning_rate=0.001,
        initial_accumulator_value=0.1,
        epsilon=1e-7,
        name="Adagrad",
        **kwargs,
    ) -> None:
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        initial_accumulator_value = numeric_hyperparameter(
            name, "initial_accumulator_value", initial_accumulator_value
        )
        if initial_accumulator_value < 0:
            raise ValueError(
                "`initial_accumulator_value` must be non-negative. Received: "
                f"initial_accumulator_value={initial_accumulator_value}."
            )
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = numeric_hyperparameter(name, "epsilon", epsilon)

    def _slot_names(self) -> tuple[str, ...]:
        return ("accumulator",)

    def _slot_initial_value(self, slot_name: str) -> float:
        return float(self.initial_accumulator_value)

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        accumulator = _array(slots["accumulator"]) + grad * grad
        slots["accumulator"].assign(make_tensor(accumulator))
        var.assign_sub(make_tensor(lr * grad / np.sqrt(accumulator + dtype(self.epsilon))))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "initial_accumulator_value": self.initial_accumulator_value,
            "epsilon": self.epsilon,
        }

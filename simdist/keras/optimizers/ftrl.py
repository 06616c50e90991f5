"""``tf.keras.optimizers.Ftrl``: Follow The Regularized Leader (McMahan et al., 2013)."""

from __future__ import annotations

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["Ftrl"]


class Ftrl(Optimizer):
    """Keras 2's FTRL-proximal update (``p = -learning_rate_power``, ``l1``/``l2``/``l2s`` the
    regularization strengths, ``l2 += beta / (2 lr)``)::

        g_s = g + 2 * l2s * w
        new_accum = accum + g * g
        linear += g_s - (new_accum**p - accum**p) / lr * w
        quadratic = new_accum**p / lr + 2 * l2
        w = (clip(linear, -l1, l1) - linear) / quadratic
        accum = new_accum                          # starts at initial_accumulator_value

    Raises:
        ValueError: a negative accumulator value or strength, a positive learning_rate_power.
    """

    def __init__(
        self,
        learning_rate=0.001,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        l2_shrinkage_regularization_strength=0.0,
        beta=0.0,
        name="Ftrl",
        **kwargs,
    ) -> None:
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        checks = (
            ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
            ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
            ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
            (
                "l2_shrinkage_regularization_strength",
                l2_shrinkage_regularization_strength,
                "positive or zero",
            ),
        )
        for key, value, what in checks:
            if value < 0.0:
                raise ValueError(f"`{key}` needs to be {what}. Received: {key}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError(
                "`learning_rate_power` needs to be negative or zero. Received: "
                f"learning_rate_power={learning_rate_power}."
            )
        self.learning_rate_power = numeric_hyperparameter(
            name, "learning_rate_power", learning_rate_power
        )
        self.initial_accumulator_value = numeric_hyperparameter(
            name, "initial_accumulator_value", initial_accumulator_value
        )
        self.l1_regularization_strength = numeric_hyperparameter(
            name, "l1_regularization_strength", l1_regularization_strength
        )
        self.l2_regularization_strength = numeric_hyperparameter(
            name, "l2_regularization_strength", l2_regularization_strength
        )
        self.l2_shrinkage_regularization_strength = numeric_hyperparameter(
            name, "l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength
        )
        self.beta = numeric_hyperparameter(name, "beta", beta)

    def _slot_names(self) -> tuple[str, ...]:
        return ("accumulator", "linear")

    def _slot_initial_value(self, slot_name: str) -> float:
        return float(self.initial_accumulator_value) if slot_name == "accumulator" else 0.0

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        power = dtype(-self.learning_rate_power)
        l1 = dtype(self.l1_regularization_strength)
        l2 = dtype(self.l2_regularization_strength) + dtype(self.beta) / (dtype(2.0) * lr)
        w = _array(var)
        shrunk = grad + dtype(2 * self.l2_shrinkage_regularization_strength) * w
        accum = _array(slots["accumulator"])
        new_accum = accum + np.square(grad)
        linear = _array(slots["linear"]) + (
            shrunk - (np.power(new_accum, power) - np.power(accum, power)) / lr * w
        )
        slots["linear"].assign(make_tensor(linear))
        quadratic = np.power(new_accum, power) / lr + dtype(2) * l2
        var.assign(make_tensor((np.clip(linear, -l1, l1) - linear) / quadratic))
        slots["accumulator"].assign(make_tensor(new_accum))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "learning_rate_power": self.learning_rate_power,
            "initial_accumulator_value": self.initial_accumulator_value,
            "l1_regularization_strength": self.l1_regularization_strength,
            "l2_regularization_strength": self.l2_regularization_strength,
            "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
            "beta": self.beta,
        }

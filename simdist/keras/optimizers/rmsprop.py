"""``tf.keras.optimizers.RMSprop``: gradients scaled by a moving root-mean-square."""

from __future__ import annotations

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Keras 2's RMSprop update for a variable ``w`` with gradient ``g``::

        velocity = rho * velocity + (1 - rho) * g**2
        avg_g = rho * avg_g + (1 - rho) * g                  # centered only
        denominator = velocity - avg_g**2 + epsilon          # centered
                      velocity + epsilon                     # otherwise
        increment = lr * g / sqrt(denominator)
        m = momentum * m + increment; w -= m                 # momentum > 0
        w -= increment                                       # otherwise

    ``epsilon`` is inside the square root. Slots: ``velocity``, ``momentum`` (momentum > 0),
    ``average_gradient`` (centered).
    """

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.9,
        momentum=0.0,
        epsilon=1e-7,
        centered=False,
        name="RMSprop",
        **kwargs,
    ) -> None:
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        momentum = numeric_hyperparameter(name, "momentum", momentum)
        if not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be between [0, 1]. Received: momentum={momentum}.")
        self.rho = numeric_hyperparameter(name, "rho", rho)
        self.momentum = numeric_hyperparameter(name, "momentum", momentum)
        self.epsilon = numeric_hyperparameter(name, "epsilon", epsilon)
        self.centered = bool(centered)

    def _slot_names(self) -> tuple[str, ...]:
        names = ["velocity"]
        if self.momentum > 0:
            names.append("momentum")
        if self.centered:
            names.append("average_gradient")
        return tuple(names)

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        rho, one_minus_rho = dtype(self.rho), dtype(1 - self.rho)
        velocity = rho * _array(slots["velocity"]) + one_minus_rho * np.square(grad)
        slots["velocity"].assign(make_tensor(velocity))
        if self.centered:
            average = rho * _array(slots["average_gradient"]) + one_minus_rho * grad
            slots["average_gradient"].assign(make_tensor(average))
            denominator = velocity - np.square(average) + dtype(self.epsilon)
        else:
            denominator = velocity + dtype(self.epsilon)
        increment = lr * grad * (dtype(1) / np.sqrt(denominator))
        if self.momentum > 0:
            moment = dtype(self.momentum) * _array(slots["momentum"]) + increment
            slots["momentum"].assign(make_tensor(moment))
            var.assign_add(make_tensor(-moment))
        else:
            var.assign_add(make_tensor(-increment))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "rho": self.rho,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "centered": self.centered,
        }

"""``tf.keras.optimizers.SGD``: gradient descent, with optional (Nesterov) momentum."""

from __future__ import annotations

import numpy as np

from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["SGD"]


class SGD(Optimizer):
    """Keras's SGD update, per variable ``w`` with gradient ``g``:

    * no momentum: ``w -= lr * g``;
    * momentum ``m``: ``v = m * v - lr * g``, then ``w += v``;
    * Nesterov: ``v = m * v - lr * g``, then ``w += m * v - lr * g``.

    Raises:
        ValueError: ``momentum`` outside [0, 1].
    """

    def __init__(
        self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs
    ) -> None:
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        if isinstance(momentum, (int, float)) and not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be between [0, 1]. Received: momentum={momentum}.")
        self.momentum = numeric_hyperparameter(name, "momentum", momentum)
        self.nesterov = bool(nesterov)

    def _slot_names(self) -> tuple[str, ...]:
        return ("momentum",) if self.momentum else ()

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        step = lr * grad
        if not self.momentum:
            var.assign_sub(step)
            return
        m = dtype(self.momentum)
        velocity = slots["momentum"]
        v = m * _array(velocity) - step
        velocity.assign(v)
        var.assign_add(m * v - step if self.nesterov else v)

    def get_config(self) -> dict:
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}

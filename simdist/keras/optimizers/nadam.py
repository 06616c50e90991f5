"""``tf.keras.optimizers.Nadam``: Adam with Nesterov momentum and Dozat's momentum schedule."""

from __future__ import annotations

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["Nadam"]


class Nadam(Optimizer):
    """Keras 2's Nadam update at step ``t`` (1 for the first step)::

        u_t = beta_1 * (1 - 0.5 * 0.96 ** t)          # the momentum schedule
        P_t = u_1 * u_2 * ... * u_t                   # its running product
        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        m_hat = u_{t+1} * m / (1 - P_t * u_{t+1}) + (1 - u_t) * g / (1 - P_t)
        v_hat = v / (1 - beta_2 ** t)
        w -= lr * m_hat / (sqrt(v_hat) + epsilon)

    ``P_t`` is multiplied up once per step, in the variables' dtype, in step order (Keras
    keeps it in a variable; here it follows from ``iterations``, so a restored optimizer
    continues with the same product).
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        name="Nadam",
        **kwargs,
    ) -> None:
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self.beta_1 = numeric_hyperparameter(name, "beta_1", beta_1)
        self.beta_2 = numeric_hyperparameter(name, "beta_2", beta_2)
        self.epsilon = numeric_hyperparameter(name, "epsilon", epsilon)
        self._u_products: dict = {}  # dtype -> (step t, P_t)

    def _slot_names(self) -> tuple[str, ...]:
        return ("m", "v")

    def _u(self, dtype, step):
        return dtype(self.beta_1) * (dtype(1.0) - dtype(0.5) * np.power(dtype(0.96), dtype(step)))

    def _u_product(self, dtype, t: int):
        step, product = self._u_products.get(dtype, (0, dtype(1.0)))
        if step > t:
            step, product = 0, dtype(1.0)
        while step < t:
            step += 1
            product = product * self._u(dtype, step)
        self._u_products[dtype] = (step, product)
        return product

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        t = int(self._iterations.numpy()) + 1
        u_t, u_next = self._u(dtype, t), self._u(dtype, t + 1)
        product = self._u_product(dtype, t)
        product_next = product * u_next
        one = dtype(1)
        m = _array(slots["m"])
        m = m + (grad - m) * dtype(1 - self.beta_1)
        v = _array(slots["v"])
        v = v + (np.square(grad) - v) * dtype(1 - self.beta_2)
        slots["m"].assign(make_tensor(m))
        slots["v"].assign(make_tensor(v))
        m_hat = u_next * m / (one - product_next) + (one - u_t) * grad / (one - product)
        v_hat = v / (one - np.power(dtype(self.beta_2), dtype(t)))
        var.assign_sub(make_tensor((m_hat * lr) / (np.sqrt(v_hat) + dtype(self.epsilon))))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
        }

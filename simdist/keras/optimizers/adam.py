"""``tf.keras.optimizers.Adam``: adaptive moments with Keras's bias-corrected step."""

from __future__ import annotations

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers.optimizer import Optimizer, _array, numeric_hyperparameter

__all__ = ["Adam"]


class Adam(Optimizer):
    """Keras's Adam update at step ``t`` (1 for the first ``apply_gradients``)::

        m = m + (g - m) * (1 - beta_1)
        v = v + (g * g - v) * (1 - beta_2)
        v_hat = max(v_hat, v)                      # amsgrad only; then v = v_hat
        lr_t = lr * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        w = w - lr_t * m / (sqrt(v) + epsilon)

    ``epsilon`` is added outside the square root and is not bias-corrected (Keras's
    "epsilon hat"). Everything is computed in the variable's dtype.
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        name="Adam",
        **kwargs,
    ) -> None:
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self.beta_1 = numeric_hyperparameter(name, "beta_1", beta_1)
        self.beta_2 = numeric_hyperparameter(name, "beta_2", beta_2)
        self.epsilon = numeric_hyperparameter(name, "epsilon", epsilon)
        self.amsgrad = bool(amsgrad)

    def _slot_names(self) -> tuple[str, ...]:
        return ("m", "v", "vhat") if self.amsgrad else ("m", "v")

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        dtype = grad.dtype.type
        t = dtype(int(self._iterations.numpy()) + 1)
        b1, b2 = dtype(self.beta_1), dtype(self.beta_2)
        one = dtype(1)
        m_slot, v_slot = slots["m"], slots["v"]
        m = _array(m_slot)
        v = _array(v_slot)
        # Each line's first operation makes a fresh array; the rest run in place on it.
        m_new = grad - m
        m_new *= dtype(1 - self.beta_1)
        m_new += m
        v_new = np.square(grad)
        v_new -= v
        v_new *= dtype(1 - self.beta_2)
        v_new += v
        m_slot.assign(make_tensor(m_new))  # a tensor: assigned without another copy
        v_slot.assign(make_tensor(v_new))
        if self.amsgrad:
            v_new = np.maximum(_array(slots["vhat"]), v_new)
            slots["vhat"].assign(make_tensor(v_new))
        alpha = lr * np.sqrt(one - np.power(b2, t)) / (one - np.power(b1, t))
        denominator = np.sqrt(v_new)
        denominator += dtype(self.epsilon)
        step = m_new * alpha
        step /= denominator
        var.assign_sub(make_tensor(step))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "amsgrad": self.amsgrad,
        }

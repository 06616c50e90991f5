"""``tf.keras.optimizers.AdamW``: Adam with decoupled weight decay (Loshchilov & Hutter)."""

from __future__ import annotations

from simdist.keras.optimizers.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam's update after ``w -= w * weight_decay * lr`` on every variable not excluded by
    :meth:`~simdist.keras.optimizers.Optimizer.exclude_from_weight_decay`.

    Raises:
        ValueError: ``weight_decay=None``.
    """

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.004,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        name="AdamW",
        **kwargs,
    ) -> None:
        if weight_decay is None:
            raise ValueError(
                "Missing value of `weight_decay` which is required and must be a float value."
            )
        super().__init__(
            learning_rate=learning_rate,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            amsgrad=amsgrad,
            name=name,
            weight_decay=weight_decay,
            **kwargs,
        )

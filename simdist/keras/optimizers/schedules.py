"""``tf.keras.optimizers.schedules``: learning rates that depend on the step number."""

from __future__ import annotations

import numpy as np

from simdist.core.convert import constant, convert_to_tensor
from simdist.core.tensor import Tensor

__all__ = [
    "LearningRateSchedule",
    "ExponentialDecay",
    "PiecewiseConstantDecay",
    "serialize",
    "deserialize",
]


def _step(step) -> float:
    return float(np.asarray(convert_to_tensor(step)._value))


class LearningRateSchedule:
    """Base class: ``schedule(step) -> learning rate`` (a float32 scalar tensor)."""

    def __call__(self, step) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__.")

    def get_config(self) -> dict:
        raise NotImplementedError(f"{type(self).__name__} must implement get_config.")

    @classmethod
    def from_config(cls, config: dict) -> LearningRateSchedule:
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with ``staircase``
    the exponent is floored.

    Raises:
        ValueError: ``decay_steps <= 0``.
    """

    def __init__(
        self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None
    ) -> None:
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be positive, got {decay_steps}.")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step) -> Tensor:
        f32 = np.float32
        p = f32(_step(step)) / f32(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        value = f32(self.initial_learning_rate) * np.power(f32(self.decay_rate), f32(p))
        return constant(value, dtype="float32")

    def get_config(self) -> dict:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` up to ``boundaries[0]`` (inclusive), ``values[1]`` up to
    ``boundaries[1]``, ..., ``values[-1]`` after the last boundary.

    Raises:
        ValueError: ``len(values) != len(boundaries) + 1``.
    """

    def __init__(self, boundaries, values, name=None) -> None:
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={list(boundaries)} of length {len(boundaries)}, and "
                f"values={list(values)} of length {len(values)}."
            )
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step) -> Tensor:
        s = _step(step)
        index = int(np.searchsorted(np.asarray(self.boundaries, dtype=np.float64), s, "left"))
        return constant(np.float32(self.values[index]), dtype="float32")

    def get_config(self) -> dict:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


_CLASSES = {cls.__name__: cls for cls in (ExponentialDecay, PiecewiseConstantDecay)}


def serialize(schedule: LearningRateSchedule) -> dict:
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config: dict) -> LearningRateSchedule:
    """Rebuild a schedule from :func:`serialize`'s output.

    Raises:
        ValueError: an unknown class name.
    """
    cls = _CLASSES.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: {config.get('class_name')!r}.")
    return cls.from_config(config["config"])

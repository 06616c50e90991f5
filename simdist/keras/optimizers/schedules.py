"""``tf.keras.optimizers.schedules``: learning rates that depend on the step number."""

from __future__ import annotations

import numpy as np

from simdist.core.convert import constant, convert_to_tensor
from simdist.core.tensor import Tensor

__all__ = [
    "LearningRateSchedule",
    "ExponentialDecay",
    "PiecewiseConstantDecay",
    "CosineDecay",
    "CosineDecayRestarts",
    "PolynomialDecay",
    "InverseTimeDecay",
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
        _check_decay_steps(decay_steps)
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


def _check_decay_steps(decay_steps) -> None:
    if decay_steps <= 0:
        raise ValueError(f"decay_steps must be positive, got {decay_steps}.")


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial_learning_rate`` to ``alpha * initial_learning_rate`` over
    ``decay_steps``, after an optional linear warmup (float32 throughout)::

        warmup (step < warmup_steps, only with warmup_target):
            lr = initial + (warmup_target - initial) * step / warmup_steps
        decay (s = min(step - warmup_steps, decay_steps), from = warmup_target or initial):
            lr = from * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps)) + alpha)

    Raises:
        ValueError: ``decay_steps <= 0``, or a warmup target with ``warmup_steps <= 0``.
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        alpha=0.0,
        name=None,
        warmup_target=None,
        warmup_steps=0,
    ) -> None:
        _check_decay_steps(decay_steps)
        if warmup_target is not None and warmup_steps < 0:
            raise ValueError(f"warmup_steps must be non-negative, got {warmup_steps}.")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step, decay_from):
        f32 = np.float32
        fraction = f32(step) / f32(self.decay_steps)
        cosine = f32(0.5) * (f32(1.0) + np.cos(f32(np.pi) * fraction))
        alpha = f32(self.alpha)
        return f32(decay_from) * ((f32(1) - alpha) * cosine + alpha)

    def __call__(self, step) -> Tensor:
        f32 = np.float32
        s = f32(_step(step))
        initial = f32(self.initial_learning_rate)
        decay_steps = f32(self.decay_steps)
        if self.warmup_target is None:
            value = self._decay(min(s, decay_steps), initial)
        else:
            target, warmup = f32(self.warmup_target), f32(self.warmup_steps)
            s = min(s, decay_steps + warmup)
            if s < warmup:
                value = (target - initial) * (s / warmup) + initial
            else:
                value = self._decay(s - warmup, target)
        return constant(f32(value), dtype="float32")

    def get_config(self) -> dict:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


class PolynomialDecay(LearningRateSchedule):
    """From ``initial_learning_rate`` to ``end_learning_rate`` in ``decay_steps``::

        s = min(step, decay_steps)                   # without cycle
        decay_steps *= max(1, ceil(step / decay_steps))  # with cycle (1 at step 0)
        lr = (initial - end) * (1 - s / decay_steps) ** power + end

    Raises:
        ValueError: ``decay_steps <= 0``.
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle=False,
        name=None,
    ) -> None:
        _check_decay_steps(decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step) -> Tensor:
        f32 = np.float32
        s = f32(_step(step))
        initial, end = f32(self.initial_learning_rate), f32(self.end_learning_rate)
        decay_steps = f32(self.decay_steps)
        if self.cycle:
            multiplier = f32(1.0) if s == 0 else np.ceil(s / decay_steps)
            decay_steps = decay_steps * multiplier
        else:
            s = min(s, decay_steps)
        p = s / decay_steps
        value = (initial - end) * np.power(f32(1) - p, f32(self.power)) + end
        return constant(f32(value), dtype="float32")

    def get_config(self) -> dict:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class InverseTimeDecay(LearningRateSchedule):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``; with ``staircase``
    the ratio ``step / decay_steps`` is floored.

    Raises:
        ValueError: ``decay_steps <= 0``.
    """

    def __init__(
        self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None
    ) -> None:
        _check_decay_steps(decay_steps)
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
        value = f32(self.initial_learning_rate) / (f32(1) + f32(self.decay_rate) * p)
        return constant(f32(value), dtype="float32")

    def get_config(self) -> dict:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR), float32 throughout: the first period lasts
    ``first_decay_steps``, each next one ``t_mul`` times longer and starting ``m_mul`` times
    lower::

        f = step / first_decay_steps
        t_mul == 1: i = floor(f), f = f - i
        else:       i = floor(log(1 - f (1 - t_mul)) / log(t_mul)),
                    f = (f - (1 - t_mul^i) / (1 - t_mul)) / t_mul^i
        lr = initial * ((1 - alpha) * 0.5 * m_mul^i * (1 + cos(pi f)) + alpha)
    """

    def __init__(
        self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name=None
    ) -> None:
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step) -> Tensor:
        f32 = np.float32
        fraction = f32(_step(step)) / f32(self.first_decay_steps)
        t_mul, m_mul, one = f32(self._t_mul), f32(self._m_mul), f32(1.0)
        if t_mul == one:
            restart = np.floor(fraction)
            fraction = fraction - restart
        else:
            restart = np.floor(np.log(one - fraction * (one - t_mul)) / np.log(t_mul))
            done = (one - t_mul**restart) / (one - t_mul)
            fraction = (fraction - done) / t_mul**restart
        cosine = f32(0.5) * m_mul**restart * (one + np.cos(f32(np.pi) * fraction))
        alpha = f32(self.alpha)
        decayed = (one - alpha) * cosine + alpha
        return constant(f32(f32(self.initial_learning_rate) * decayed), dtype="float32")

    def get_config(self) -> dict:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "first_decay_steps": self.first_decay_steps,
            "t_mul": self._t_mul,
            "m_mul": self._m_mul,
            "alpha": self.alpha,
            "name": self.name,
        }


_CLASSES = {
    cls.__name__: cls
    for cls in (
        ExponentialDecay,
        PiecewiseConstantDecay,
        CosineDecay,
        CosineDecayRestarts,
        PolynomialDecay,
        InverseTimeDecay,
    )
}


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

"""``tf.keras.optimizers.legacy``: Keras 2's OptimizerV2 optimizers, on simdist's update loop.

Each legacy optimizer is simdist's optimizer of the same name with what OptimizerV2 does
differently (checked against TF 2.21 + tf_keras in tests/keras/test_optimizers_legacy_vs_tf.py):

* ``decay``: the learning rate of step ``t`` (``iterations`` before the step) is
  ``lr / (1 + decay * t)``, in float32;
* clipping: ``clipvalue``, then ``clipnorm``, then ``global_clipnorm``, each that is set
  (the new optimizers apply only one; ``clipnorm`` with ``global_clipnorm`` is refused);
* arguments: only ``clipnorm``, ``clipvalue``, ``global_clipnorm``, ``lr`` and ``decay``
  besides the optimizer's own (no ``weight_decay``, ``use_ema``, ``jit_compile``):
  TypeError otherwise, as OptimizerV2;
* ``RMSprop``: without momentum, ``w -= lr * g / (sqrt(rms) + epsilon)`` (epsilon outside
  the square root); with momentum TF's ``ApplyRMSProp`` kernels keep it inside;
* ``get_config``: OptimizerV2's keys (``name``, ``learning_rate``, ``decay``, the
  hyperparameters, and the clip values that are set).

The update rules are otherwise the same kernels (SGD, Adam, Adagrad, Adadelta, Adamax, Nadam,
Ftrl). Differences kept (docs/differences.md): a legacy optimizer is also an instance of
``tf.keras.optimizers.Optimizer`` (in TF it is not), and a user subclass of
``legacy.Optimizer`` implements ``_update_step(grad, var, slots, lr)``, not OptimizerV2's
``_resource_apply_dense``.
"""

from __future__ import annotations

import inspect

import numpy as np

from simdist.core.tensor import make_tensor
from simdist.keras.optimizers import clipping
from simdist.keras.optimizers.adadelta import Adadelta as _Adadelta
from simdist.keras.optimizers.adagrad import Adagrad as _Adagrad
from simdist.keras.optimizers.adam import Adam as _Adam
from simdist.keras.optimizers.adamax import Adamax as _Adamax
from simdist.keras.optimizers.ftrl import Ftrl as _Ftrl
from simdist.keras.optimizers.nadam import Nadam as _Nadam
from simdist.keras.optimizers.optimizer import Optimizer as _Optimizer
from simdist.keras.optimizers.optimizer import _array
from simdist.keras.optimizers.rmsprop import RMSprop as _RMSprop
from simdist.keras.optimizers.schedules import LearningRateSchedule
from simdist.keras.optimizers.sgd import SGD as _SGD

__all__ = ["Optimizer", "SGD", "Adam", "Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl", "RMSprop"]

_ALLOWED = frozenset({"clipnorm", "clipvalue", "lr", "global_clipnorm", "decay"})
_OWN_CONFIG = {  # the hyperparameters each legacy get_config lists after name/lr/decay
    "SGD": ("momentum", "nesterov"),
    "Adam": ("beta_1", "beta_2", "epsilon", "amsgrad"),
    "Adagrad": ("initial_accumulator_value", "epsilon"),
    "Adadelta": ("rho", "epsilon"),
    "Adamax": ("beta_1", "beta_2", "epsilon"),
    "Nadam": ("beta_1", "beta_2", "epsilon"),
    "RMSprop": ("rho", "momentum", "epsilon", "centered"),
    "Ftrl": (
        "initial_accumulator_value",
        "learning_rate_power",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "l2_shrinkage_regularization_strength",
        "beta",
    ),
}


class Optimizer(_Optimizer):
    """The legacy (OptimizerV2) behaviour shared by every legacy optimizer (see the module)."""

    def _legacy_init(self, kwargs: dict, own=frozenset()) -> dict:
        """Check OptimizerV2's keyword arguments (besides the optimizer's ``own``); keep
        ``decay``; return the rest."""
        for key in kwargs:
            if key not in _ALLOWED and key not in own:
                raise TypeError(
                    f"Unexpected keyword argument passed to optimizer: {key}. Allowed kwargs "
                    f"are {sorted(_ALLOWED)}."
                )
        kwargs = dict(kwargs)
        decay = kwargs.pop("decay", 0.0)
        if decay < 0.0:
            raise ValueError(f"decay cannot be less than 0. Received: decay={decay}.")
        self._initial_decay = float(decay)
        if kwargs.get("clipnorm") is not None and kwargs.get("global_clipnorm") is not None:
            raise ValueError(
                "Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
                f"`clipnorm`={kwargs['clipnorm']}, "
                f"`global_clipnorm`={kwargs['global_clipnorm']}."
            )
        return kwargs

    @property
    def decay(self) -> float:
        return self._initial_decay

    def _current_learning_rate(self) -> float:
        lr = super()._current_learning_rate()
        if self._initial_decay > 0.0:
            step = np.float32(int(_array(self._iterations)))
            lr = np.float32(lr) / (np.float32(1.0) + np.float32(self._initial_decay) * step)
        return float(lr)

    def _clip_gradients(self, grads: list) -> list[np.ndarray]:
        arrays = [_array(g) for g in grads]
        if self.clipvalue is not None:
            arrays = clipping.clip_gradients(arrays, clipvalue=self.clipvalue)
        if self.clipnorm is not None:
            arrays = clipping.clip_gradients(arrays, clipnorm=self.clipnorm)
        if self.global_clipnorm is not None:
            arrays = clipping.clip_gradients(arrays, global_clipnorm=self.global_clipnorm)
        return arrays

    def get_config(self) -> dict:
        full = super().get_config()
        config = {"name": full["name"], "learning_rate": full["learning_rate"]}
        config["decay"] = self._initial_decay
        for key in _OWN_CONFIG.get(type(self).__name__, ()):
            config[key] = full[key]
        for key in ("clipnorm", "global_clipnorm", "clipvalue"):
            if full.get(key) is not None:
                config[key] = full[key]
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        config.pop("is_legacy_optimizer", None)
        if "lr" in config:
            config["learning_rate"] = config.pop("lr")
        return super().from_config(config)


def _legacy(new_cls):
    """The legacy class of ``new_cls``: its arguments, with OptimizerV2's extra rules."""

    own = frozenset(inspect.signature(new_cls.__init__).parameters) - {"self", "kwargs"}

    def __init__(self, *args, **kwargs):
        kwargs = self._legacy_init(kwargs, own)
        new_cls.__init__(self, *args, **kwargs)

    cls = type(
        new_cls.__name__,
        (Optimizer, new_cls),
        {
            "__init__": __init__,
            "__doc__": f"``tf.keras.optimizers.legacy.{new_cls.__name__}`` (see the module).",
            "__module__": __name__,
        },
    )
    return cls


SGD = _legacy(_SGD)
Adam = _legacy(_Adam)
Adagrad = _legacy(_Adagrad)
Adadelta = _legacy(_Adadelta)
Adamax = _legacy(_Adamax)
Ftrl = _legacy(_Ftrl)


class RMSprop(Optimizer, _RMSprop):
    """``tf.keras.optimizers.legacy.RMSprop``: without momentum epsilon is added outside
    the square root (OptimizerV2's Python update); with momentum TF's kernels keep it inside,
    as the new RMSprop does."""

    def __init__(self, *args, **kwargs):
        own = frozenset(inspect.signature(_RMSprop.__init__).parameters) - {"self", "kwargs"}
        kwargs = self._legacy_init(kwargs, own)
        _RMSprop.__init__(self, *args, **kwargs)

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        if self.momentum > 0:
            return super()._update_step(grad, var, slots, lr)
        dtype = grad.dtype.type
        rho, one_minus_rho = dtype(self.rho), dtype(1 - self.rho)
        rms = rho * _array(slots["velocity"]) + one_minus_rho * np.square(grad)
        slots["velocity"].assign(make_tensor(rms))
        denominator = rms
        if self.centered:
            average = rho * _array(slots["average_gradient"]) + one_minus_rho * grad
            slots["average_gradient"].assign(make_tensor(average))
            denominator = rms - np.square(average)
        var.assign_sub(make_tensor(lr * grad / (np.sqrt(denominator) + dtype(self.epsilon))))
        return None


class Nadam(Optimizer, _Nadam):
    """``tf.keras.optimizers.legacy.Nadam``: the momentum schedule of OptimizerV2's Nadam,
    ``u_t = beta_1 * (1 - 0.5 * 0.96 ** (schedule_decay * t))`` with ``schedule_decay``
    0.004 (the new Nadam has ``0.96 ** t``). As in TF, that value is also this optimizer's
    ``decay`` (a ``decay=`` argument is replaced by it) and the learning rate is not decayed.

    Raises:
        ValueError: a LearningRateSchedule (OptimizerV2's Nadam refuses one too).
    """

    def __init__(self, *args, **kwargs):
        own = frozenset(inspect.signature(_Nadam.__init__).parameters) - {"self", "kwargs"}
        kwargs["decay"] = kwargs.pop("schedule_decay", 0.004)
        kwargs = self._legacy_init(kwargs, own)
        _Nadam.__init__(self, *args, **kwargs)
        if isinstance(self._learning_rate, LearningRateSchedule):
            raise ValueError(
                "The Nadam optimizer does not support tf.keras.optimizers.LearningRateSchedules "
                "as the learning rate."
            )

    def _current_learning_rate(self) -> float:
        return _Optimizer._current_learning_rate(self)  # schedule_decay is not an lr decay

    def _u(self, dtype, step):
        exponent = dtype(self._initial_decay) * dtype(step)
        return dtype(self.beta_1) * (dtype(1.0) - dtype(0.5) * np.power(dtype(0.96), exponent))

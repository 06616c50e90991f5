"""``tf.train.ExponentialMovingAverage``: shadow copies of variables that trail them.

``apply(var_list)`` makes, once per variable, a shadow variable (not trainable, initialised
to the variable's value, distributed as the variable is: a mirrored variable's shadow is
mirrored) and then moves every shadow toward its variable::

    shadow -= (1 - decay) * (shadow - variable)

with ``decay = min(decay, (1 + num_updates) / (10 + num_updates))`` when ``num_updates``
is given. As TF's ``assign_moving_average``: called in a replica context (inside
``strategy.run``) each update is a ``merge_call`` whose value is the MEAN over the replicas
(``extended.reduce_to``), applied to every copy of the shadow by ``extended.update``; in a
cross-replica context (or with no strategy) the shadow is updated directly. Only variables
are averaged (TF also averages plain tensors into zero-initialised shadows: refused here).
"""

from __future__ import annotations

from simdist.core import dtypes
from simdist.core.ops.math_ops import cast, minimum
from simdist.core.tensor import Tensor, make_tensor
from simdist.core.variables import Variable
from simdist.distribute import distribute_lib
from simdist.distribute.reduce_util import ReduceOp

__all__ = ["ExponentialMovingAverage"]

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


class ExponentialMovingAverage:
    """Moving averages of variables (``tf.train.ExponentialMovingAverage``).

    >>> import simdist as tf
    >>> w = tf.Variable(1.0)
    >>> ema = tf.train.ExponentialMovingAverage(decay=0.5)
    >>> ema.apply([w])
    >>> _ = w.assign(3.0)
    >>> ema.apply([w])
    >>> float(ema.average(w).numpy()), ema.average_name(w)
    (2.0, 'Variable/ExponentialMovingAverage')
    """

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}  # var.ref() -> shadow

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None) -> None:
        """Create the shadows not made yet, then update every shadow of ``var_list``.

        Raises:
            ValueError: ``var_list`` is None (TF 2 has no global collection of variables).
            TypeError: an item is not a float variable.
        """
        if var_list is None:
            raise ValueError(
                "ExponentialMovingAverage.apply needs var_list in TF 2 (there is no global "
                "collection of trainable variables): pass model.trainable_variables."
            )
        var_list = list(var_list)
        for var in var_list:
            if isinstance(var, Tensor) and not hasattr(var, "assign"):
                raise NotImplementedError(
                    "ExponentialMovingAverage.apply of a tensor (a zero-initialised shadow) "
                    "is not supported by simdist; average a tf.Variable."
                )
            if not hasattr(var, "assign") or var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
        for var in var_list:
            if var.ref() not in self._averages:
                self._averages[var.ref()] = self._create_shadow(var)
        decay = self._current_decay()
        for var in var_list:
            _assign_moving_average(self._averages[var.ref()], var, decay)

    def _create_shadow(self, var) -> Variable:
        base = var.name[:-2] if var.name.endswith(":0") else var.name
        strategy = getattr(var, "distribute_strategy", None)
        read = var.read_value() if hasattr(var, "read_value") else var.value()
        initial = make_tensor(read.numpy().copy(), var.dtype)
        if strategy is not None and distribute_lib.get_strategy() is not strategy:
            with strategy.scope():  # distributed as its variable is
                return Variable(initial, name=f"{base}/{self._name}", trainable=False)
        return Variable(initial, name=f"{base}/{self._name}", trainable=False)

    def _current_decay(self) -> Tensor:
        decay = cast(self._decay, dtypes.float32)
        if self._num_updates is not None:
            n = cast(self._num_updates, dtypes.float32)
            decay = minimum(decay, (1.0 + n) / (10.0 + n))
        return decay

    def average(self, var):
        """The shadow of ``var``, or None before ``apply`` made one."""
        return self._averages.get(var.ref())

    def average_name(self, var) -> str:
        """The shadow's name without ``:0`` (made or to be made)."""
        shadow = self._averages.get(var.ref())
        if shadow is not None:
            return shadow.name[:-2] if shadow.name.endswith(":0") else shadow.name
        base = var.name[:-2] if var.name.endswith(":0") else var.name
        return f"{base}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """``{restore name: variable}``: the shadow's name for the averaged variables."""
        if moving_avg_variables is None:
            moving_avg_variables = [self._averages_key_var(k) for k in self._averages]
        return {self.average_name(v): v for v in moving_avg_variables}

    @staticmethod
    def _averages_key_var(ref):
        return ref.deref()


def _assign_moving_average(shadow, var, decay) -> None:
    one_minus = 1.0 - decay
    if one_minus.dtype != shadow.dtype.base_dtype:
        one_minus = cast(one_minus, shadow.dtype.base_dtype)

    def update_fn(v, value):
        return v.assign_sub((v - value) * one_minus)

    ctx = distribute_lib.get_replica_context()
    own = getattr(shadow, "distribute_strategy", None)
    if own is not None and distribute_lib.get_strategy() is not own:
        # A distributed shadow updated outside its strategy: each copy from its variable's
        # copy, in the strategy's cross-replica context (TF 2.21 fails here with a TypeError
        # inside its update).
        with own.scope():
            own.extended.update(shadow, update_fn, args=(var,))
    elif ctx is not None:

        def merge_fn(strategy, v, value):
            value = strategy.extended.reduce_to(ReduceOp.MEAN, value, v)
            strategy.extended.update(v, update_fn, args=(value,))

        ctx.merge_call(merge_fn, args=(shadow, var))
    else:
        distribute_lib.get_strategy().extended.update(shadow, update_fn, args=(var,))

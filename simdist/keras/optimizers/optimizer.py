"""``tf.keras.optimizers.Optimizer``: the update loop shared by SGD, Adam and friends.

``apply_gradients`` runs, in order:

1. inside a strategy's replica function, ``merge_call`` into the cross-replica context, where
   ``_apply_cross_replica`` sums the per-replica gradients (``extended.batch_reduce_to``),
   clips them once, and updates every copy of every variable through ``extended.update``;
2. elsewhere: drop ``(None, var)`` pairs with a warning naming the variables (all None:
   ValueError); clip (one rule: ``clipnorm``, else ``global_clipnorm``, else ``clipvalue``;
   see :mod:`.clipping`);
3. ``_distributed_apply``: create slots lazily; for each variable, decoupled weight decay
   (``w -= w * weight_decay * lr``, unless excluded) then the subclass's ``_update_step``, at
   the learning rate of the current step; then ``iterations += 1``.

Updates are computed in the variable's dtype and written through the variable's ``assign*``
methods (in ``extended.update``, a mirrored variable's writes touch one device's copy).
"""

from __future__ import annotations

import contextlib
import numbers
import re
import warnings

import numpy as np

from simdist.core import dtypes, profile_hook, step_hooks, trackable
from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import GradientTape
from simdist.core.variables import Variable, VariableAggregation
from simdist.keras import backend
from simdist.keras.optimizers import clipping, ema
from simdist.keras.optimizers.gradient_lists import (
    check_same_on_every_replica,
    clip_per_replica,
    drop_missing,
    first_component,
)
from simdist.keras.optimizers.mirrored_update import update_once as _update_once
from simdist.keras.optimizers.schedules import LearningRateSchedule

__all__ = ["Optimizer"]


def numeric_hyperparameter(optimizer: str, name: str, value):
    """``value`` if it can be an optimizer's numeric hyperparameter, checked at construction.

    A real number, a tensor or variable, or a callable returning one (as Keras accepts).

    Raises:
        TypeError: anything else (a string, None, a bool), naming the optimizer and argument.
    """
    if callable(value) or hasattr(value, "_to_tensor") or hasattr(value, "dtype"):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{optimizer}: {name} must be a number (or a tensor, or a callable returning one), "
            f"got {value!r}; e.g. {name}=0.9."
        )
    return value


class _CallableList(list):
    """A list that also answers ``()``: ``opt.variables`` and ``opt.variables()`` both work."""

    def __call__(self) -> list:
        return list(self)


def _array(value) -> np.ndarray:
    return np.asarray(convert_to_tensor(value)._value)


class Optimizer(trackable.Trackable):
    """Base class of the Keras optimizers.

    Args:
        name: prefix of the slot variables' names.
        learning_rate: a float, a zero-argument callable, or a ``LearningRateSchedule``
            (called with the current ``iterations``).
        clipnorm: clip each gradient to this L2 norm.
        clipvalue: clip each gradient element to ``[-clipvalue, clipvalue]``.
        global_clipnorm: clip all gradients together to this global L2 norm.
        weight_decay: decoupled weight decay applied before each update (``None``: off).
        use_ema, ema_momentum, ema_overwrite_frequency: keep a moving average of each
            variable (see :mod:`.ema`); ``jit_compile`` changes nothing here.

    Raises:
        ValueError: both ``clipnorm`` and ``global_clipnorm``, or a negative clip value.
        TypeError: an unknown keyword argument.
        ValueError: ``ema_momentum`` outside [0, 1], an ``ema_overwrite_frequency`` that is
            not a positive integer.
    """

    _HAS_SLOTS = ()

    def __init__(
        self,
        name: str,
        learning_rate=0.001,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        weight_decay=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        jit_compile=True,
        **kwargs,
    ) -> None:
        if use_ema:  # as Keras, checked only when the average is kept
            ema.check_arguments(ema_momentum, ema_overwrite_frequency)
        self.use_ema = bool(use_ema)
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self._averages: dict = {}  # variable.ref() -> its moving average (use_ema=True)
        self.jit_compile = jit_compile
        if "lr" in kwargs:
            warnings.warn("`lr` is deprecated; use `learning_rate`.", stacklevel=3)
            learning_rate = kwargs.pop("lr")
        if kwargs:
            raise TypeError(f"Unexpected keyword argument(s) for {name}: {sorted(kwargs)}.")
        if clipnorm is not None and global_clipnorm is not None:
            raise ValueError(
                "At most one of `clipnorm` and `global_clipnorm` can be set. Received: "
                f"clipnorm={clipnorm}, global_clipnorm={global_clipnorm}."
            )
        for key, value in (
            ("clipnorm", clipnorm),
            ("clipvalue", clipvalue),
            ("global_clipnorm", global_clipnorm),
        ):
            if value is not None and value < 0:
                raise ValueError(f"`{key}` must be non-negative, received {key}={value}.")
        self._name = name
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.weight_decay = weight_decay
        self._exclude_ids: set = set()
        self._exclude_names: list[str] = []
        self._iterations = Variable(
            0,
            name="iteration",
            dtype=dtypes.int64,
            trainable=False,
            aggregation=VariableAggregation.ONLY_FIRST_REPLICA,
        )
        self._learning_rate = self._build_learning_rate(learning_rate)
        self._slots: dict = {}  # variable.ref() -> {slot name: slot variable}
        self._variables = _CallableList([self._iterations])

    # --- hyperparameters ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def iterations(self) -> Variable:
        """Number of ``apply_gradients`` calls so far (an int64 variable)."""
        return self._iterations

    @staticmethod
    def _build_learning_rate(learning_rate):
        if isinstance(learning_rate, LearningRateSchedule) or callable(learning_rate):
            return learning_rate
        return Variable(
            float(learning_rate), name="learning_rate", dtype=backend.floatx(), trainable=False
        )

    @property
    def learning_rate(self):
        """The learning-rate variable (or the schedule / callable that was given)."""
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        if isinstance(self._learning_rate, Variable) and not callable(value):
            self._learning_rate.assign(float(value))
        else:
            self._learning_rate = self._build_learning_rate(value)

    lr = learning_rate

    def _current_learning_rate(self) -> float:
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return float(_array(lr(self._iterations)))
        if callable(lr) and not isinstance(lr, Variable):
            return float(_array(lr()))
        return float(_array(lr))

    @property
    def variables(self) -> _CallableList:
        """``iterations`` and the slot variables, in creation order."""
        return self._variables

    # --- slots --------------------------------------------------------------------------
    def _create_slot(self, var, slot_name: str):
        """A slot for ``var`` (zeros unless the optimizer says otherwise), distributed like
        ``var`` (as TF: a slot is created under the scope of the strategy that created its
        variable)."""
        base = var.name[:-2] if var.name.endswith(":0") else var.name
        strategy = getattr(var, "distribute_strategy", None)
        scope = strategy.scope() if strategy is not None else contextlib.nullcontext()
        with scope:
            slot = Variable(
                np.full(
                    tuple(var.shape), self._slot_initial_value(slot_name), var.dtype.as_numpy_dtype
                ),
                name=f"{self._name}/{base}/{slot_name}",
                dtype=var.dtype,
                trainable=False,
            )
        self._variables.append(slot)
        return slot

    def _slot_initial_value(self, slot_name: str) -> float:
        return 0.0

    def _slots_for(self, var) -> dict:
        slots = self._slots.get(var.ref())
        if slots is None:
            slots = {name: self._create_slot(var, name) for name in self._slot_names()}
            self._slots[var.ref()] = slots
            if self.use_ema:
                self._averages[var.ref()] = ema.create_average(self, var)
            trackable.children_changed(self)  # a pending checkpoint restore assigns them
        return slots

    def _slot_names(self) -> tuple[str, ...]:
        return self._HAS_SLOTS

    # --- the trackable protocol (simdist.core.trackable) ---------------------------------
    def _trackable_children(self) -> dict:
        """``iter`` (``iterations``) and ``learning_rate`` when it is a variable. Slots are
        not children: each is saved under the variable it belongs to."""
        out = {"iter": self._iterations}
        if isinstance(self._learning_rate, Variable):
            out["learning_rate"] = self._learning_rate
        return out

    def _trackable_slots(self) -> list:
        """``(variable, slot name, slot variable)`` for every slot created so far."""
        return [
            (ref.deref(), slot_name, slot)
            for ref, slots in self._slots.items()
            for slot_name, slot in slots.items()
        ] + [(ref.deref(), "average", average) for ref, average in self._averages.items()]

    def build(self, var_list) -> None:
        """Create the slots of every variable in ``var_list`` now (before the first step)."""
        for var in var_list:
            self._slots_for(var)

    def get_slot_names(self) -> list[str]:
        return list(self._slot_names())

    def get_slot(self, var, slot_name: str):
        """The slot ``slot_name`` of ``var``.

        Raises:
            KeyError: ``var`` has no slots yet, or no slot of that name.
        """
        slots = self._slots.get(var.ref())
        if slots is None or slot_name not in slots:
            raise KeyError(
                f"No slot {slot_name!r} for variable {var.name}; slots are created by the "
                f"first apply_gradients (or build). Slot names: {self.get_slot_names()}."
            )
        return slots[slot_name]

    # --- weight decay -------------------------------------------------------------------
    def exclude_from_weight_decay(self, var_list=None, var_names=None) -> None:
        """Leave these variables (or those whose name matches a regex in ``var_names``)
        out of weight decay.

        Raises:
            ValueError: the optimizer already created slots (call this before training).
        """
        if self._slots:
            raise ValueError(
                "`exclude_from_weight_decay()` can only be configured before the optimizer is "
                "built (before the first apply_gradients)."
            )
        self._exclude_ids = {id(v) for v in (var_list or [])}
        self._exclude_names = list(var_names or [])

    def _use_weight_decay(self, var) -> bool:
        if self.weight_decay is None or id(var) in self._exclude_ids:
            return False
        return not any(re.search(pattern, var.name) for pattern in self._exclude_names)

    # --- the update loop ----------------------------------------------------------------
    def minimize(self, loss, var_list, tape=None):
        """Compute gradients of ``loss`` for ``var_list`` and apply them.

        Args:
            loss: a zero-argument callable returning the loss, or a loss tensor computed
                under ``tape``.
            var_list: variables (or a callable returning them).
            tape: the ``GradientTape`` that recorded a tensor ``loss``.

        Raises:
            ValueError: a tensor ``loss`` without ``tape``.
        """
        if not callable(loss) and tape is None:
            raise ValueError(
                f"`tape` is required when a `Tensor` loss is passed. Received: loss={loss!r}, "
                "tape=None."
            )
        if callable(loss):
            tape = tape if tape is not None else GradientTape()
            with tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list, strict=True))

    def apply_gradients(
        self,
        grads_and_vars,
        name=None,
        skip_gradients_aggregation=False,
        experimental_aggregate_gradients=True,
    ):
        """Apply ``(gradient, variable)`` pairs; returns ``iterations``.

        Raises:
            ValueError: no pairs, or no gradient for any variable; under a strategy, a
                variable whose gradient is None on some replicas only (also an
                ``AssertionError``, TF's class there).
        """
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("`grads_and_vars` is empty: pass (gradient, variable) pairs.")
        ctx = state.replica_context
        if ctx is not None and ctx._runner is not None:
            # Under a strategy, as TF: meet the other replicas, then sum and update once per
            # device in the cross-replica context.
            aggregate = not skip_gradients_aggregation and experimental_aggregate_gradients
            return ctx.merge_call(self._apply_cross_replica, args=(pairs, aggregate))
        kept = [(convert_to_tensor(g, dtype=v.dtype), v) for g, v in drop_missing(pairs)]
        grads = self._clip_gradients([g for g, _ in kept])
        self._distributed_apply(list(zip(grads, [v for _, v in kept], strict=True)))
        return self._iterations

    def _apply_cross_replica(self, strategy, pairs: list, aggregate: bool):
        """``apply_gradients`` in a strategy's cross-replica context (from merge_call).

        ``pairs`` holds per-replica gradients; they are summed over replicas (unless
        ``aggregate`` is False, then each replica's own gradient updates its own copy) and
        every copy of every variable gets the same update, through ``extended.update``.
        """
        variables, grads = self._gather_gradients(strategy, pairs, aggregate)
        return self._apply_gathered(strategy, pairs, variables, grads, aggregate)

    def _gather_gradients(self, strategy, pairs: list, aggregate: bool) -> tuple[list, list]:
        """The variables with a gradient, and their gradients: summed over replicas (one
        tensor each: every copy holds the same) when ``aggregate``, else per replica; not
        clipped yet. (The LossScaleOptimizer decides a step's finiteness between this and
        :meth:`_apply_gathered`, as TF decides it on the aggregated, unclipped gradients.)"""
        for _, var in pairs:
            if not strategy.extended.variable_created_in_scope(var):
                raise ValueError(
                    f"Trying to update variable {var.name} with a "
                    f"{type(strategy).__name__}, but it was not created under that strategy's "
                    "scope. Create the model and the optimizer inside `with strategy.scope():`."
                )
        check_same_on_every_replica(pairs)
        kept = drop_missing(pairs)
        variables = [v for _, v in kept]
        if aggregate:
            reduced = strategy.extended.batch_reduce_to("sum", [(g, v) for g, v in kept])
            return variables, [first_component(g) for g in reduced]
        return variables, [g for g, _ in kept]

    def _apply_gathered(
        self, strategy, pairs: list, variables: list, grads: list, aggregate: bool
    ):
        """Clip :meth:`_gather_gradients`'s gradients and update every copy of each variable."""
        if aggregate:
            # Every copy of a reduced gradient is the same array: clip once (global norms too).
            grads = self._clip_gradients(grads)
        else:
            # each replica's own gradients for its own copies, clipped on that replica (a
            # global norm over that replica's gradients), as Keras clips in replica context
            clipping_on = self.clipnorm or self.global_clipnorm or self.clipvalue
            clip = self._clip_gradients if clipping_on else None
            grads = clip_per_replica(grads, strategy, clip)
        pairs_to_apply = list(zip(grads, variables, strict=True))
        before = None
        if step_hooks.wants_values_before():
            before = [np.array(_array(first_component(v))) for v in variables]
        step_hooks.gradients_applied(strategy, variables, grads, before, aggregate)
        self._distributed_apply(pairs_to_apply, strategy, per_copy=not aggregate)
        profile_hook.optimizer_updated(self, pairs)
        return self._iterations

    def _clip_gradients(self, grads: list) -> list[np.ndarray]:
        return clipping.clip_gradients(
            [_array(g) for g in grads], self.clipnorm, self.global_clipnorm, self.clipvalue
        )

    def _distributed_apply(self, grads_and_vars: list, strategy=None, per_copy=False) -> None:
        """Update every variable with its gradient, then count the step.

        With a ``strategy``, each copy of a variable is updated on its device through
        ``strategy.extended.update`` (the gradient's matching component); ``per_copy``: the
        gradients were not summed over replicas, so every copy runs its own update.
        """
        lr = self._current_learning_rate()
        self._prepare_step()
        for grad, var in grads_and_vars:
            slots = self._slots_for(var)
            dtype = var.dtype.as_numpy_dtype
            decay = self._use_weight_decay(var)

            def update(target, g, slots=slots, dtype=dtype, decay=decay):
                if decay:
                    value = _array(target)
                    target.assign_sub(value * dtype(self.weight_decay) * dtype(lr))
                self._update_step(np.asarray(g, dtype), target, slots, dtype(lr))

            if strategy is None:
                update(var, grad)
            elif per_copy or not _update_once(strategy, var, slots, update, grad):
                strategy.extended.update(var, update, args=(grad,))
        if self.use_ema:
            variables = [v for _, v in grads_and_vars]
            ema.update_averages(self, variables, strategy)
            step = int(_array(self._iterations)) + 1
            if self.ema_overwrite_frequency and step % self.ema_overwrite_frequency == 0:
                ema.overwrite_with_averages(self, variables, strategy)
        self._iterations.assign_add(1)

    def finalize_variable_values(self, var_list) -> None:
        """End of training (``fit`` calls it): with ``use_ema``, set each variable of
        ``var_list`` to its moving average; otherwise nothing.

        Raises:
            ValueError: a variable this optimizer keeps no average of.
        """
        if self.use_ema:
            ema.overwrite_with_averages(self, list(var_list), None)

    def _prepare_step(self) -> None:
        """Work done once per step before the variables' updates (Nadam's momentum product)."""

    def _update_step(self, grad: np.ndarray, var, slots: dict, lr) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _update_step.")

    # --- config -------------------------------------------------------------------------
    def get_config(self) -> dict:
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            lr_config = {"class_name": type(lr).__name__, "config": lr.get_config()}
        elif isinstance(lr, Variable):
            lr_config = float(lr.numpy())
        else:
            lr_config = lr
        return {
            "name": self._name,
            "learning_rate": lr_config,
            "clipnorm": self.clipnorm,
            "clipvalue": self.clipvalue,
            "global_clipnorm": self.global_clipnorm,
            "weight_decay": self.weight_decay,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "jit_compile": self.jit_compile,
            "is_legacy_optimizer": False,
        }

    @classmethod
    def from_config(cls, config: dict):
        from simdist.keras.optimizers import schedules

        config = dict(config)
        config.pop("is_legacy_optimizer", None)
        lr = config.get("learning_rate")
        if isinstance(lr, dict):
            config["learning_rate"] = schedules.deserialize(lr)
        return cls(**config)

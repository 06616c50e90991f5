"""``tf.keras.mixed_precision.LossScaleOptimizer``: loss scaling around another optimizer.

float16 gradients underflow; multiplying the loss by a large scale before differentiating
and dividing the gradients by it afterwards keeps them representable. What Keras 2 does
(tf_keras's ``LossScaleOptimizerV3``), and simdist with it:

* ``get_scaled_loss(loss)`` is ``loss * scale`` (the scale cast to the loss's dtype);
  ``get_unscaled_gradients(grads)`` multiplies each by ``1 / scale`` (computed in float32,
  then cast to the gradient's dtype). ``minimize`` and ``model.fit`` do both.
* ``apply_gradients`` with a dynamic scale (the default: 2**15, see :mod:`.loss_scale`)
  checks whether all gradients are finite; if so it applies them with the inner optimizer,
  else it skips the step. Either way the scale is updated and ``iterations`` counts the step
  (TF increments it on a skipped step too).
* Under a strategy the gradients are summed over replicas first and the finiteness is that
  of the sums, the same on every replica, so every replica skips the same steps (TF reads it
  on replica 0 of the all-reduced gradients). With ``skip_gradients_aggregation=True`` TF
  takes replica 0's own gradients' finiteness for all replicas; so does simdist.
* ``dynamic=False`` keeps ``initial_scale`` and applies every step, finite or not.
* Loss scaling is refused under ParameterServerStrategy, CentralStorageStrategy and
  TPUStrategy, as TF refuses it.
"""

from __future__ import annotations

import warnings

import numpy as np

from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops
from simdist.core.tape import GradientTape
from simdist.keras.mixed_precision.loss_scale import DynamicLossScale, all_finite
from simdist.keras.optimizers.gradient_lists import drop_missing, first_component
from simdist.keras.optimizers.optimizer import Optimizer

__all__ = ["LossScaleOptimizer"]

_DEFAULT_INITIAL_SCALE = 2**15
_DEFAULT_GROWTH_STEPS = 2000


def _check_strategy_supported() -> None:
    from simdist.distribute.distribute_lib import get_strategy

    strategy = get_strategy()
    name = type(strategy).__name__
    if "TPU" in name:
        raise ValueError(
            "Loss scaling is not supported with TPUStrategy. Loss scaling is unnecessary with "
            "TPUs, since they support bfloat16 instead of float16 and bfloat16 does not "
            "require loss scaling. You should remove the use of the LossScaleOptimizer when "
            "TPUs are used."
        )
    if name in ("ParameterServerStrategy", "ParameterServerStrategyV2", "CentralStorageStrategy"):
        raise ValueError(
            f"Loss scaling is not supported with the tf.distribute.Strategy: {name}. Try "
            "using a different Strategy, e.g. a MirroredStrategy"
        )


def _raw(g) -> np.ndarray:
    return np.asarray(convert_to_tensor(first_component(g))._value)


class LossScaleOptimizer(Optimizer):
    """An optimizer that scales the loss and unscales the gradients (see the module).

    Args:
        inner_optimizer: the optimizer to wrap (a ``tf.keras.optimizers.Optimizer``).
        dynamic: whether the scale adapts (default True).
        initial_scale: the first scale (default 2**15 when dynamic; required otherwise).
        dynamic_growth_steps: finite steps before the scale doubles (default 2000).

    Raises:
        TypeError: an inner optimizer that is not an Optimizer, or is a LossScaleOptimizer;
            a ``dynamic`` that is not a bool.
        ValueError: ``dynamic=False`` without ``initial_scale``, or with
            ``dynamic_growth_steps``; an optimizer already wrapped; an unsupported strategy.
    """

    def __init__(
        self, inner_optimizer, dynamic=True, initial_scale=None, dynamic_growth_steps=None
    ) -> None:
        # Optimizer.__init__ is not called, as in TF: the state is the inner optimizer's.
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(
                f'"inner_optimizer" must be an instance of Optimizer, but got: {inner_optimizer}.'
            )
        if not isinstance(dynamic, bool):
            raise TypeError(
                '"dynamic" argument to LossScaleOptimizer.__init__ must be a bool, but got: '
                f"{dynamic!r}"
            )
        if isinstance(inner_optimizer, LossScaleOptimizer):
            raise TypeError(
                f"LossScaleOptimizer cannot wrap another LossScaleOptimizer, but got: "
                f"{inner_optimizer}"
            )
        _check_strategy_supported()
        if getattr(inner_optimizer, "_is_wrapped_by_loss_scale_optimizer", False):
            raise ValueError(
                '"inner_optimizer" is already wrapped by a LossScaleOptimizer. An optimizer can '
                "only be wrapped by a single LossScaleOptimizer"
            )
        self._optimizer = inner_optimizer
        inner_optimizer._is_wrapped_by_loss_scale_optimizer = True
        if dynamic:
            self._loss_scale = DynamicLossScale(
                _DEFAULT_INITIAL_SCALE if initial_scale is None else initial_scale,
                _DEFAULT_GROWTH_STEPS if dynamic_growth_steps is None else dynamic_growth_steps,
            )
        else:
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            if dynamic_growth_steps is not None:
                raise ValueError(
                    '"dynamic_growth_steps" must be None if "dynamic" is False, but got: '
                    f"{dynamic_growth_steps}"
                )
            self._loss_scale = float(initial_scale)
        self._loss_has_been_scaled = False
        self._gradients_have_been_unscaled = False

    # --- the scale --------------------------------------------------------------------------
    @property
    def dynamic(self) -> bool:
        return isinstance(self._loss_scale, DynamicLossScale)

    @property
    def loss_scale(self):
        """The current loss scale, a float32 scalar tensor."""
        if self.dynamic:
            return convert_to_tensor(self._loss_scale.current_loss_scale)
        return convert_to_tensor(np.float32(self._loss_scale))

    @property
    def dynamic_counter(self):
        """The int64 variable counting finite steps since the last change (None: static)."""
        return self._loss_scale.counter if self.dynamic else None

    @property
    def initial_scale(self) -> float:
        return self._loss_scale.initial_loss_scale if self.dynamic else self._loss_scale

    @property
    def dynamic_growth_steps(self):
        return self._loss_scale.growth_steps if self.dynamic else None

    @property
    def inner_optimizer(self) -> Optimizer:
        return self._optimizer

    def get_scaled_loss(self, loss):
        """``loss * loss_scale`` (a callable loss gives a callable)."""
        self._loss_has_been_scaled = True
        if callable(loss):

            def scaled_loss():
                value = convert_to_tensor(loss())
                return math_ops.multiply(value, math_ops.cast(self.loss_scale, value.dtype))

            return scaled_loss
        loss = convert_to_tensor(loss)
        return math_ops.multiply(loss, math_ops.cast(self.loss_scale, loss.dtype))

    def get_unscaled_gradients(self, grads):
        """Each gradient times ``1 / loss_scale`` (None stays None)."""
        self._gradients_have_been_unscaled = True
        reciprocal = math_ops.divide(convert_to_tensor(np.float32(1.0)), self.loss_scale)
        out = []
        for g in grads:
            if g is None:
                out.append(None)
                continue
            g = convert_to_tensor(g)
            out.append(math_ops.multiply(g, math_ops.cast(reciprocal, g.dtype)))
        return out

    # --- the step ---------------------------------------------------------------------------
    def minimize(self, loss, var_list, tape=None):
        """Scale ``loss``, differentiate, unscale, apply (TF's ``compute_gradients`` path)."""
        if not callable(loss) and tape is None:
            raise ValueError(
                f"`tape` is required when a `Tensor` loss is passed. Received: loss={loss!r}, "
                "tape=None."
            )
        tape = tape if tape is not None else GradientTape()
        with tape:
            if callable(loss):
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
            scaled = self.get_scaled_loss(loss)
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        grads = self.get_unscaled_gradients(tape.gradient(scaled, var_list))
        return self.apply_gradients(zip(grads, var_list, strict=True))

    def apply_gradients(
        self,
        grads_and_vars,
        name=None,
        skip_gradients_aggregation=False,
        experimental_aggregate_gradients=True,
    ):
        """Apply the gradients if all are finite (dynamic scale), update the scale.

        Raises:
            ValueError: no pairs; an unsupported strategy.
        """
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("`grads_and_vars` is empty: pass (gradient, variable) pairs.")
        _check_strategy_supported()
        self._maybe_warn_about_scaling()
        ctx = state.replica_context
        if ctx is not None and ctx._runner is not None:
            aggregate = not skip_gradients_aggregation and experimental_aggregate_gradients
            return ctx.merge_call(self._apply_cross_replica, args=(pairs, aggregate))
        kept = drop_missing(pairs)
        if self._should_apply([_raw(g) for g, _ in kept]):
            return self._optimizer.apply_gradients(kept)
        self._optimizer.iterations.assign_add(1)
        return self._optimizer.iterations

    def _apply_cross_replica(self, strategy, pairs: list, aggregate: bool):
        inner = self._optimizer
        variables, grads = inner._gather_gradients(strategy, pairs, aggregate)
        # aggregated: every replica's sum is the same, so is its finiteness; else replica 0's
        if self._should_apply([_raw(g) for g in grads]):
            return inner._apply_gathered(strategy, pairs, variables, grads, aggregate)
        inner.iterations.assign_add(1)
        return inner.iterations

    def _should_apply(self, arrays: list) -> bool:
        if not self.dynamic:
            return True
        finite = all_finite(arrays)
        self._loss_scale.update(finite)
        return finite

    def _maybe_warn_about_scaling(self) -> None:
        missing = [
            name
            for name, done in (
                ("get_scaled_loss()", self._loss_has_been_scaled),
                ("get_unscaled_gradients()", self._gradients_have_been_unscaled),
            )
            if not done
        ]
        if missing:
            warnings.warn(
                f"You forgot to call LossScaleOptimizer.{' and LossScaleOptimizer.'.join(missing)}"
                " before calling LossScaleOptimizer.apply_gradients(). This will likely result "
                "in worse model quality: scale the loss under the tape with "
                "opt.get_scaled_loss(loss) and unscale the gradients with "
                "opt.get_unscaled_gradients(grads).",
                stacklevel=3,
            )

    # --- what the inner optimizer holds ------------------------------------------------------
    @property
    def name(self) -> str:
        return self._optimizer.name

    @property
    def iterations(self):
        return self._optimizer.iterations

    @property
    def learning_rate(self):
        return self._optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        self._optimizer.learning_rate = value

    lr = learning_rate

    @property
    def variables(self):
        return self._optimizer.variables

    def build(self, var_list) -> None:
        self._optimizer.build(var_list)

    def get_slot_names(self) -> list[str]:
        return self._optimizer.get_slot_names()

    def get_slot(self, var, slot_name: str):
        return self._optimizer.get_slot(var, slot_name)

    def finalize_variable_values(self, var_list) -> None:
        self._optimizer.finalize_variable_values(var_list)

    def __getattr__(self, name: str):
        # hyperparameters (clipnorm, beta_1, use_ema, ...) are the inner optimizer's
        if name.startswith("__") or name == "_optimizer":
            raise AttributeError(name)
        return getattr(self._optimizer, name)

    # --- checkpoints: the inner optimizer's children, plus loss_scale (TF's layout) ----------
    def _trackable_children(self) -> dict:
        children = dict(self._optimizer._trackable_children())
        if self.dynamic:
            children["loss_scale"] = self._loss_scale
        return children

    def _trackable_slots(self) -> list:
        return self._optimizer._trackable_slots()

    # --- config ------------------------------------------------------------------------------
    def get_config(self) -> dict:
        from simdist.keras import optimizers

        return {
            "inner_optimizer": optimizers.serialize(self._optimizer),
            "dynamic": self.dynamic,
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }

    @staticmethod
    def config_kinds() -> dict:
        """A config of the right field kinds, for the saved-model schema (``saving_schema``
        checks field names and kinds against a default instance's; a LossScaleOptimizer
        has none, and ``dynamic_growth_steps`` may be None or an int)."""
        return {
            "inner_optimizer": {},
            "dynamic": True,
            "initial_scale": float(_DEFAULT_INITIAL_SCALE),
            "dynamic_growth_steps": None,
        }

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        from simdist.keras import optimizers

        config = dict(config)
        inner = config.pop("inner_optimizer")
        if not isinstance(inner, Optimizer):
            inner = optimizers.deserialize(inner, custom_objects=custom_objects)
        return cls(inner, **config)

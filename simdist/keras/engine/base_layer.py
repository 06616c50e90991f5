"""``tf.keras.layers.Layer``: weights, sub-layer tracking, build-on-first-call, ``training``.

What Keras 2 does, and simdist with it:

* Assigning a layer, a variable, or a list/tuple/dict holding them to an attribute tracks it,
  in assignment order (reassigning moves it to the end; dict entries in sorted-key order).
  ``trainable_weights`` lists a layer's own weights (``add_weight`` and variable attributes,
  in creation order) and then each sub-layer's, depth first, without duplicates.
* The first call builds the layer from its input's shape (``build(input_shape)``), inside the
  layer's name scope, so variables are named ``dense/kernel:0`` (``my_model/dense/kernel:0``
  when an enclosing layer is calling it).
* ``training=`` given to a call reaches every nested call that does not pass its own.
* Floating inputs are cast to the layer's compute dtype (Keras's autocast); NumPy inputs
  become tensors.
* A layer follows a dtype policy (``simdist.keras.mixed_precision``): ``dtype=None`` takes the
  global one. Under ``"mixed_float16"`` weights are float32 and read as float16 inside the
  layer's call (``simdist.core.autocast``); ``dtype`` is the variable dtype.
* Weights are created with ``tf.Variable(...)``, so a strategy's ``variable_creator_scope``
  sees every one of them.
"""

from __future__ import annotations

import inspect
import itertools
import threading

import numpy as np

from simdist.core import autocast, dtypes, nest, profile_hook, step_hooks, trackable
from simdist.core.convert import convert_to_tensor
from simdist.core.module import Module
from simdist.core.name_scope import outside_name_scopes
from simdist.core.ops import math_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.core.variables import Variable, VariableAggregation, VariableSynchronization
from simdist.keras import backend, initializers
from simdist.keras.engine import masking, tracking
from simdist.keras.engine.input_spec import assert_input_compatibility
from simdist.keras.engine.keras_tensor import is_symbolic, symbolic_call
from simdist.keras.engine.node_attributes import NodeAttributes
from simdist.keras.engine.tracking import AutoTrackable, dedup, is_variable
from simdist.keras.mixed_precision import policy as dtype_policies

__all__ = ["Layer", "is_variable"]

_ALLOWED_KWARGS = frozenset(
    {"input_shape", "batch_input_shape", "batch_size", "input_dim", "weights", "autocast"}
)


class _CallContext(threading.local):
    def __init__(self) -> None:
        self.scopes: list = []  # (layer, name) of the layers being built or called
        self.training: list = []  # the training value of each enclosing call
        self.depth = 0  # how many layer calls are in progress
        self.generation = 0  # this thread's outermost call (from _GENERATIONS): its losses
        self.probing = 0  # > 0 while a Functional API probe call runs: add_loss drops values


_CTX = _CallContext()
_GENERATIONS = itertools.count(1)  # across threads: a later call always has a larger number


class Layer(AutoTrackable, NodeAttributes):
    """The base class of every layer and model (``tf.keras.layers.Layer``).

    Subclasses create weights in ``build(input_shape)`` with :meth:`add_weight` (or in
    ``__init__`` when the shapes are known) and compute in ``call(inputs, ...)``.

    Raises:
        TypeError: an unknown keyword argument.
    """

    # tf.Module's attribute walk: the tracking record and the cached weight list repeat
    # what the attributes hold
    _TF_MODULE_IGNORED_PROPERTIES = frozenset(("_tracked", "_trainable_weights_cache"))

    _OPENS_NAME_SCOPE = True  # Sequential turns this off, as Keras's Sequential does
    input_spec = None  # an InputSpec (or a list of them) the layer's inputs must fit

    def __init__(self, trainable=True, name=None, dtype=None, dynamic=False, **kwargs) -> None:
        for key in kwargs:
            if key not in _ALLOWED_KWARGS:
                raise TypeError(f"Keyword argument not understood: {key!r}")
        self._init_tracking()
        init = object.__setattr__
        init(self, "_losses", [])
        init(self, "_call_losses", {})  # thread -> [(generation, loss)] of add_loss in calls
        init(self, "_metrics", [])
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Layer name must be a string, got {name!r}.")
        if name:
            backend.observe_object_name(name)
        init(self, "_name", name or backend.unique_object_name(self._default_name()))
        init(self, "_trainable", bool(trainable))
        policy = dtype_policies.layer_policy(dtype)
        init(self, "_dtype_policy", policy)
        init(self, "_dtype", policy.variable_dtype)
        init(self, "_compute_dtype", policy.compute_dtype)
        init(self, "_autocast", kwargs.get("autocast", True))
        init(self, "_initial_weights", kwargs.get("weights"))
        init(self, "_batch_input_shape", self._batch_shape_from(kwargs))
        init(self, "built", False)
        init(self, "dynamic", dynamic)
        params = inspect.signature(self.call).parameters
        init(self, "_expects_training_arg", "training" in params)
        init(self, "_expects_mask_arg", "mask" in params)
        # as Keras 2: a layer that computes its own mask supports masking
        init(self, "_supports_masking", type(self).compute_mask is not Layer.compute_mask)

    @classmethod
    def _default_name(cls) -> str:
        return backend.to_snake_case(cls.__name__)

    @staticmethod
    def _batch_shape_from(kwargs: dict):
        if "batch_input_shape" in kwargs:
            return tuple(kwargs["batch_input_shape"])
        shape = kwargs.get("input_shape")
        if shape is None and kwargs.get("input_dim") is not None:
            shape = (kwargs["input_dim"],)
        if shape is None:
            return None
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return (kwargs.get("batch_size"), *shape)

    @property
    def submodules(self) -> list:
        return self._flatten_layers(include_self=False)

    # --- identity -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> str:
        """The dtype of the layer's weights (the policy's variable dtype), as Keras 2."""
        return self._dtype

    variable_dtype = dtype

    @property
    def compute_dtype(self) -> str:
        """The dtype the layer computes in: its inputs are cast to it."""
        return self._compute_dtype

    @property
    def dtype_policy(self):
        """The layer's ``tf.keras.mixed_precision.Policy``."""
        return self._dtype_policy

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        for layer in self._flatten_layers():
            object.__setattr__(layer, "_trainable", bool(value))
        tracking.note_tracking_change()

    # --- weights ------------------------------------------------------------------------
    def add_weight(
        self,
        name=None,
        shape=None,
        dtype=None,
        initializer=None,
        regularizer=None,
        trainable=None,
        constraint=None,
        synchronization=VariableSynchronization.AUTO,
        aggregation=VariableAggregation.NONE,
        **kwargs,
    ):
        """Create a weight variable of this layer and track it.

        Args:
            name: the weight's name (``kernel``); the variable is ``<scope>/<name>:0``.
            shape: its shape (``()`` when omitted).
            dtype: its dtype (the layer's by default).
            initializer: name or callable; default glorot_uniform for floats, zeros else.
            trainable: default True, False for ``synchronization=ON_READ``.
            synchronization, aggregation: passed to ``tf.Variable`` for strategies.
            experimental_autocast: False keeps a floating weight of a mixed-precision layer
                from reading as the compute dtype in the layer's call (default True).

        Raises:
            ValueError: ``trainable=True`` with ``synchronization=ON_READ``.
        """
        shape = () if shape is None else tuple(as_shape(shape).as_list())
        dtype = dtypes.as_dtype(dtype or self._dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = initializers.get(initializer)
        sync = (
            VariableSynchronization(synchronization)
            if not isinstance(synchronization, VariableSynchronization)
            else synchronization
        )
        if sync is VariableSynchronization.ON_READ:
            if trainable:
                raise ValueError(
                    "Synchronization value can be set to VariableSynchronization.ON_READ only "
                    "for non-trainable variables. You have specified trainable=True and "
                    "synchronization=VariableSynchronization.ON_READ."
                )
            trainable = False
        elif trainable is None:
            trainable = True
        variable = Variable(
            initial_value=lambda: init(shape, dtype=dtype),
            trainable=trainable,
            name=self._weight_path(name or "Variable"),
            dtype=dtype,
            constraint=constraint,
            synchronization=synchronization,
            aggregation=aggregation,
        )
        if (
            kwargs.get("experimental_autocast", True)
            and dtype.is_floating
            and self._compute_dtype != self._dtype
        ):
            variable._autocast = True  # read as the compute dtype in layer calls
        (self._trainable_weights if trainable else self._non_trainable_weights).append(variable)
        tracking.note_tracking_change()
        if regularizer is not None:
            self._losses.append(lambda: regularizer(variable))
        trackable.children_changed(self)  # a pending checkpoint restore assigns it now
        return variable

    def _weight_path(self, name: str) -> str:
        names = [n for _, n in _CTX.scopes]
        if not (_CTX.scopes and _CTX.scopes[-1][0] is self):
            names.append(self._name)
        return "/".join([*names, name])

    @property
    def trainable_weights(self) -> list:
        """Own trainable weights, then each sub-layer's, depth first, each once.

        A training step asks this every step; the list is cached and gathered again after
        any tracking change (:func:`tracking.note_tracking_change`) or when one of the lists
        and dicts the walk went through holds other items (a layer appended to a tracked
        list). A tree with a sub-layer that overrides ``trainable_weights`` is not cached."""
        if not self._trainable:
            return []
        cached = self.__dict__.get("_trainable_weights_cache")
        if (
            cached is not None
            and cached[0] == tracking.tracking_epoch()
            and tracking.containers_unchanged(cached[1])
        ):
            return list(cached[2])
        epoch = tracking.tracking_epoch()
        out: list = []
        containers: list = []
        cacheable = self._gather_trainable_weights(out, containers)
        result = dedup(out)
        if cacheable:
            snapshot = tracking.snapshot_containers(containers)
            object.__setattr__(self, "_trainable_weights_cache", (epoch, snapshot, result))
        return list(result)

    def _gather_trainable_weights(self, out: list, containers: list) -> bool:
        """Append own trainable weights, then each sub-layer's, depth first, repeats kept;
        ``containers`` receives the lists and dicts walked. Returns whether the result may
        be cached (no sub-layer class overrides ``trainable_weights``).

        One ``dedup`` of the result keeps the first occurrences a ``dedup`` per level would.
        A sub-layer whose class overrides ``trainable_weights`` is asked through it."""
        cacheable = True
        out.extend(self._trainable_weights)
        containers.append(self._trainable_weights)
        for layer in self._direct_sublayers(containers):
            if getattr(type(layer), "trainable_weights", None) is not _TRAINABLE_WEIGHTS:
                out.extend(layer.trainable_weights)
                cacheable = False
            elif layer._trainable:
                cacheable = layer._gather_trainable_weights(out, containers) and cacheable
        return cacheable

    @property
    def non_trainable_weights(self) -> list:
        if self._trainable:
            own = list(self._non_trainable_weights)
            children = [w for x in self._direct_sublayers() for w in x.non_trainable_weights]
        else:
            own = self._trainable_weights + self._non_trainable_weights
            children = [w for x in self._direct_sublayers() for w in x.weights]
        return dedup(own + children)

    @property
    def weights(self) -> list:
        return dedup(self.trainable_weights + self.non_trainable_weights)

    variables = weights

    @property
    def trainable_variables(self) -> list:
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list:
        return self.non_trainable_weights

    def get_weights(self) -> list[np.ndarray]:
        """The weights' current values as NumPy arrays, in :attr:`weights` order."""
        return [np.array(convert_to_tensor(w)._value) for w in self.weights]

    def set_weights(self, weights) -> None:
        """Assign NumPy values to the weights, in :attr:`weights` order.

        Raises:
            ValueError: a different number of arrays, or a shape that does not match.
        """
        params = self.weights
        weights = list(weights)
        if len(params) != len(weights):
            raise ValueError(
                f'You called `set_weights(weights)` on layer "{self._name}" with a weight list '
                f"of length {len(weights)}, but the layer was expecting {len(params)} weights. "
                f"Provided weights: {str(weights)[:50]}..."
            )
        values = []
        for param, value in zip(params, weights, strict=True):
            ref_shape = tuple(param.shape)
            given = tuple(np.shape(value))
            if not as_shape(ref_shape).is_compatible_with(given):
                raise ValueError(
                    f"Layer {self._name} weight shape {ref_shape} is not compatible with "
                    f"provided weight shape {given}."
                )
            values.append(np.asarray(value, dtype=param.dtype.as_numpy_dtype))
        for param, value in zip(params, values, strict=True):
            param.assign(value)

    def count_params(self) -> int:
        """The number of scalars in all weights.

        Raises:
            ValueError: the layer is not built yet.
        """
        if not self.built:
            raise ValueError(
                f"You tried to call `count_params` on layer {self._name}, but the layer isn't "
                f"built. You can build it manually via: `{self._name}.build(batch_input_shape)`."
            )
        return int(sum(int(np.prod(tuple(w.shape))) for w in self.weights))

    # --- losses -------------------------------------------------------------------------
    def add_loss(self, loss) -> None:
        """Add a loss tensor (or a zero-argument callable giving one) to :attr:`losses`.

        A loss added while the layer is being called belongs to that call: the next
        outermost call replaces it (as Keras clears a model's call losses on each call),
        and each thread (each replica) sees the losses of its own calls.
        Losses added outside any call (and weight regularizers) stay. In a Functional
        API probe (building the graph) the value is dropped.
        """
        if _CTX.probing:
            return
        if _CTX.depth:  # each replica thread keeps the losses of its own call
            generation, thread = _CTX.generation, threading.get_ident()
            kept = [(g, x) for g, x in self._call_losses.get(thread, ()) if g == generation]
            self._call_losses[thread] = [*kept, (generation, loss)]
        else:
            self._losses.append(loss)

    @property
    def losses(self) -> list:
        """Regularization and ``add_loss`` losses of this layer and its sub-layers."""
        out = []
        for layer in self._flatten_layers():
            for loss in layer._losses:
                out.append(loss() if callable(loss) else loss)
            mine = layer._call_losses.get(threading.get_ident(), ())
            latest = max((g for g, _ in mine), default=None)
            out.extend(x for g, x in mine if g == latest)
        if out:
            step_hooks.note("regularization_losses", layer=self)
        return out

    # --- masks (simdist.keras.engine.masking) ------------------------------------------
    @property
    def supports_masking(self) -> bool:
        """Whether the layer passes on (or computes) the mask of its inputs."""
        return self._supports_masking

    @supports_masking.setter
    def supports_masking(self, value: bool) -> None:
        object.__setattr__(self, "_supports_masking", bool(value))

    def compute_mask(self, inputs, mask=None):
        """The mask of the outputs: the input mask when the layer supports masking.

        Raises:
            TypeError: a mask given to a layer that does not support masking.
        """
        if not self._supports_masking:
            if any(m is not None for m in nest.flatten(mask)):
                raise TypeError(
                    f"Layer {self._name} does not support masking, but was passed an "
                    f"input_mask: {mask}"
                )
            return None
        return mask

    # --- building and calling -----------------------------------------------------------
    def build(self, input_shape) -> None:
        """Create the weights for inputs of ``input_shape``; the base class only marks built."""
        self.built = True

    build._is_default = True  # _maybe_build skips default builds (sub-layers build lazily)

    def call(self, inputs, *args, **kwargs):
        """The layer's computation; the base class returns its inputs."""
        return inputs

    def _maybe_build(self, input_shape) -> None:
        if self.built:
            return
        if not getattr(self.build, "_is_default", False):
            if self._OPENS_NAME_SCOPE:
                _CTX.scopes.append((self, self._name))
            try:
                self.build(input_shape)
            finally:
                if self._OPENS_NAME_SCOPE:
                    _CTX.scopes.pop()
        object.__setattr__(self, "built", True)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            object.__setattr__(self, "_initial_weights", None)

    def _convert_inputs(self, inputs):
        if type(inputs) is Tensor and inputs._dtype._name == self._compute_dtype:
            # One tensor already of the layer's dtype (a model's inner layers): convert
            # below would return it unchanged (no NumPy conversion, no autocast).
            return inputs

        def convert(x):
            if isinstance(x, (np.ndarray, np.generic, float, int)) and not isinstance(x, bool):
                x = convert_to_tensor(x)
            if (
                self._autocast
                and isinstance(x, Tensor)
                and x.dtype.is_floating
                and x.dtype.name != self._compute_dtype
                and dtypes.as_dtype(self._compute_dtype).is_floating
            ):
                x = math_ops.cast(x, self._compute_dtype)
            return x

        return nest.map_structure(convert, inputs)

    def __call__(self, *args, **kwargs):
        """Convert and cast inputs, build on first call, then run ``call``.

        ``training`` is passed on to ``call`` when it accepts it; when not given, the value
        of the enclosing layer call is used.
        """
        if args:
            inputs, args = args[0], args[1:]
        elif "inputs" in kwargs:
            inputs = kwargs.pop("inputs")
        else:
            raise ValueError(f"Layer {self._name} was called without inputs.")
        if type(inputs) is Tensor:  # the common case: one tensor, maybe masked
            input_masks = getattr(inputs, "_keras_mask", None)  # masking.mask_of
        elif is_symbolic(inputs):
            return symbolic_call(self, self._probe_call, (inputs, *args), kwargs)
        else:
            input_masks = masking.masks_of(inputs)
        if "mask" in kwargs:
            input_masks = kwargs["mask"]
        elif self._expects_mask_arg and input_masks is not None:
            kwargs["mask"] = input_masks
        inputs = self._convert_inputs(inputs)
        if self.input_spec is not None:  # a layer that declares what it accepts (Keras)
            assert_input_compatibility(self.input_spec, inputs, self._name)
        ctx = _CTX  # one thread-local lookup
        training = kwargs.pop("training", None)
        enclosing = ctx.training
        if training is None and enclosing:
            training = enclosing[-1]
        if self._expects_training_arg and training is not None:
            kwargs["training"] = training
        if not self.built:
            shapes = nest.map_structure(
                lambda t: t.shape if isinstance(t, Tensor) else TensorShape(np.shape(t)), inputs
            )
            self._maybe_build(shapes)
        opens_scope = self._OPENS_NAME_SCOPE
        if opens_scope:
            ctx.scopes.append((self, self._name))
        enclosing.append(training)
        if not ctx.depth:
            ctx.generation = next(_GENERATIONS)
        ctx.depth += 1
        autocast_previous = autocast.enter_layer_call(self._compute_dtype)
        try:
            outputs = self.call(inputs, *args, **kwargs)
            profile_hook.layer_called(self, inputs)
            if step_hooks.listener() is not None:  # no keyword dict built when nobody listens
                step_hooks.note("layer", layer=self, training=training)
            if self._supports_masking and (
                input_masks is not None or type(self).compute_mask is not Layer.compute_mask
            ):  # (a pass-through layer given no mask has none to attach)
                masking.attach_output_masks(self, inputs, outputs, input_masks)
            return outputs
        finally:
            autocast.exit_layer_call(autocast_previous)
            ctx.depth -= 1
            enclosing.pop()
            if opens_scope:
                ctx.scopes.pop()

    def _probe_call(self, *args, **kwargs):
        """``__call__`` on the zeros of a Functional API probe (see keras_tensor)."""
        _CTX.probing += 1
        try:
            with outside_name_scopes():  # Keras builds symbolic models in its own graph
                return self(*args, **kwargs)
        finally:
            _CTX.probing -= 1

    def compute_output_shape(self, input_shape):
        """The output shape for ``input_shape``, found by calling the layer on zeros.

        Unknown dimensions are taken as 1 for the trial call and reported as ``None``.
        """
        shape = as_shape(input_shape).as_list()
        probe = convert_to_tensor(np.zeros([1 if d is None else d for d in shape], self._dtype))
        out = self(probe, training=False) if self._expects_training_arg else self(probe)
        dims = list(out.shape)
        if shape and shape[0] is None and dims:
            dims[0] = None
        return TensorShape(dims)

    compute_output_shape._probes = True  # symbolic_call: no rule of the layer's own

    # --- config -------------------------------------------------------------------------
    def get_config(self) -> dict:
        config = {
            "name": self._name,
            "trainable": self._trainable,
            "dtype": dtype_policies.serialize(self._dtype_policy),
        }
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


_TRAINABLE_WEIGHTS = Layer.__dict__["trainable_weights"]  # the property, to spot overrides


# As in TF, every layer is a tf.Module (its variables are found when a module holds it).
Module.register(Layer)

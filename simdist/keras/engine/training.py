"""``tf.keras.Model`` for subclassing: a Layer that lists its layers and builds by a trial call.

``compile``/``fit``/``evaluate``/``predict``/``train_on_batch``/``test_on_batch``/``summary``
delegate to :mod:`simdist.keras.engine.training_loop` and :mod:`~simdist.keras.engine.summary`.
A model remembers the strategy whose scope was active when it was created
(``distribute_strategy``); training distributes with it. ``Model(inputs, outputs)`` makes a
Functional model (:mod:`simdist.keras.engine.functional`).
"""

from __future__ import annotations

import numpy as np

from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.shape import as_shape
from simdist.keras.engine import summary as summary_lib
from simdist.keras.engine import training_loop
from simdist.keras.engine.base_layer import Layer
from simdist.keras.engine.tracking import dedup

__all__ = ["Model"]


class Model(Layer):
    """A model defined by subclassing: layers as attributes, computation in ``call``.

    ``tf.keras.Model(inputs, outputs)`` returns a ``Functional`` model instead.

    Raises:
        NotImplementedError: a subclass whose ``__init__`` passes ``inputs``/``outputs``.
    """

    def __new__(cls, *args, **kwargs):
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            from simdist.keras.engine.functional import Functional

            return object.__new__(Functional)  # Model(inputs, outputs): the Functional API
        return object.__new__(cls)

    def __init__(self, *args, **kwargs) -> None:
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise NotImplementedError(
                f"{type(self).__name__}.__init__ was given inputs/outputs: a subclassed model "
                "built from a Functional graph (super().__init__(inputs, outputs)) is not yet "
                "in simdist. Use tf.keras.Model(inputs, outputs) directly, or define call()."
            )
        super().__init__(**kwargs)
        created_under = state.strategy_stack[-1] if state.strategy_stack else None
        object.__setattr__(self, "_distribution_strategy", created_under)
        object.__setattr__(self, "_is_compiled", False)
        object.__setattr__(self, "optimizer", None)
        object.__setattr__(self, "stop_training", False)
        object.__setattr__(self, "history", None)

    @property
    def distribute_strategy(self):
        """The strategy the model was created under (the default strategy if none)."""
        if self._distribution_strategy is not None:
            return self._distribution_strategy
        return _default()

    # --- training (see simdist.keras.engine.training_loop) ---------------------------------
    compile = training_loop.compile
    fit = training_loop.fit
    evaluate = training_loop.evaluate
    predict = training_loop.predict
    train_on_batch = training_loop.train_on_batch
    test_on_batch = training_loop.test_on_batch
    reset_metrics = training_loop.reset_metrics
    summary = summary_lib.summary

    @property
    def metrics(self) -> list:
        """The compiled metrics (after ``compile``)."""
        return list(getattr(self, "_compiled_metrics", []))

    @property
    def metrics_names(self) -> list[str]:
        """``['loss', <metric names>...]`` once compiled."""
        if not self._is_compiled:
            return []
        outputs = list(getattr(self, "_output_loss_trackers", {}))
        return ["loss", *outputs, *[m.name for m in self._compiled_metrics]]

    @property
    def weights(self) -> list:
        """Each sub-layer's weights (trainable, then not) in layer order, then the model's
        own: Keras 2's order for a model, so ``get_weights``/``set_weights`` lists match."""
        out: list = []
        for layer in self._direct_sublayers():
            out.extend(layer.weights)
        out.extend(self._trainable_weights + self._non_trainable_weights)
        return dedup(out)

    @property
    def variables(self) -> list:
        return self.weights

    @property
    def layers(self) -> list:
        """The model's direct sub-layers, in the order their attributes were assigned."""
        return self._flatten_layers(include_self=False, recursive=False)

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """A direct sub-layer by ``name`` or by ``index`` in :attr:`layers`.

        Raises:
            ValueError: no such layer, or neither or both of ``name`` and ``index`` given.
        """
        if (name is None) == (index is None):
            raise ValueError("Provide exactly one of `name` or `index` to get_layer.")
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model only has "
                    f"{len(layers)} layers."
                )
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[x.name for x in layers]}.")

    def build(self, input_shape) -> None:
        """Build by calling the model once on zeros of ``input_shape`` (None dims as 1).

        Raises:
            ValueError: ``input_shape`` is None.
        """
        if input_shape is None:
            raise ValueError(
                "Input shape must be defined when calling `build()` on a `Model` subclass."
            )
        if self.built:
            return
        object.__setattr__(self, "_build_input_shape", input_shape)  # what model.save records
        shape = [1 if d is None else d for d in as_shape(input_shape).as_list()]
        probe = convert_to_tensor(np.zeros(shape, self.dtype))
        object.__setattr__(self, "built", True)
        try:
            if self._expects_training_arg:
                self(probe, training=False)
            else:
                self(probe)
        except Exception:
            object.__setattr__(self, "built", False)
            raise

    build._is_default = True  # a first call builds sub-layers itself; no trial call then

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """A Functional model from ``Functional.get_config()`` (as ``tf.keras.Model``'s), or
        ``cls(**config)`` for a subclass."""
        if cls is Model and isinstance(config, dict) and (
            {"layers", "nodes"} <= set(config) or {"layers", "input_layers"} <= set(config)
        ):
            from simdist.keras.engine.functional import Functional

            return Functional.from_config(config, custom_objects=custom_objects)
        return cls(**config)

    # --- saving (simdist/keras/saving.py) -----------------------------------------------
    def save_spec(self, dynamic_batch: bool = True):
        """Keras 2's ``Model.save_spec``: ``([TensorSpec of each input], {})`` once the model
        has been built (called, fit or given an input shape), else None.

        Functional models give their inputs' dtypes and names; other models their build
        shape, the model's dtype and TF's names ``input_1``, ``input_2``... (simdist does not
        keep the first call's dtype: an integer input of a subclassed model is reported
        with the model's float dtype).
        """
        from simdist.core.tensor_spec import TensorSpec

        shape = getattr(self, "_build_input_shape", None)
        if shape is None or not self.built:
            return None

        def batchless(dims):
            dims = as_shape(dims).as_list()
            return [None, *dims[1:]] if dynamic_batch and dims else dims

        inputs = getattr(self, "inputs", None)
        if inputs:
            specs = [TensorSpec(batchless(t.shape), t.dtype, name=t.name) for t in inputs]
        else:
            shapes = shape if isinstance(shape, list) else [shape]
            names = [f"input_{i + 1}" for i in range(len(shapes))]
            specs = [
                TensorSpec(batchless(s), self.dtype, name=n)
                for s, n in zip(shapes, names, strict=True)
            ]
        return specs, {}

    def _maybe_build(self, input_shape) -> None:
        if not self.built:  # remembered so model.save can rebuild the model when loading
            object.__setattr__(self, "_build_input_shape", input_shape)
        super()._maybe_build(input_shape)

    def save(self, filepath, overwrite: bool = True, save_format=None, **kwargs) -> None:
        """Save architecture and weights as a directory (see ``simdist.keras.saving``)."""
        from simdist.keras import saving

        saving.save_model(self, filepath, overwrite=overwrite, save_format=save_format, **kwargs)

    def save_weights(self, filepath, overwrite: bool = True, save_format=None, options=None):
        """Write the weights as a ``tf.train.Checkpoint`` at prefix ``filepath``."""
        from simdist.keras import saving

        saving.save_weights(self, filepath, overwrite=overwrite, save_format=save_format)

    def load_weights(self, filepath, skip_mismatch: bool = False, by_name: bool = False):
        """Restore weights written by ``save_weights``; returns the restore status."""
        from simdist.keras import saving

        return saving.load_weights(self, filepath, skip_mismatch=skip_mismatch, by_name=by_name)


def _default():
    from simdist.distribute.default_strategy import default_strategy

    return default_strategy()

"""``tf.keras.Input`` and ``tf.keras.layers.InputLayer``: where a model's inputs enter.

``Input(shape=(28, 28))`` returns a symbolic :class:`KerasTensor` of shape
``(None, 28, 28)`` made by a new ``InputLayer`` (named ``input_1``, ``input_2``... as in
Keras 2), the start of a Functional model. As the first entry of a ``Sequential`` an
``InputLayer`` makes the model build at construction; it is not listed in
``Sequential.layers`` (it is in a Functional model's ``layers``).
"""

from __future__ import annotations

from simdist.core import dtypes
from simdist.keras import backend
from simdist.keras.engine.base_layer import Layer
from simdist.keras.engine.keras_tensor import KerasTensor, Node

__all__ = ["InputLayer", "Input"]


class InputLayer(Layer):
    """An identity layer that carries ``input_shape`` (without the batch axis).

    Raises:
        ValueError: neither ``input_shape`` nor ``batch_input_shape`` is given.
        NotImplementedError: ``sparse=True`` or ``ragged=True``.
    """

    def __init__(
        self,
        input_shape=None,
        batch_size=None,
        dtype=None,
        input_tensor=None,
        sparse=None,
        name=None,
        ragged=None,
        type_spec=None,
        **kwargs,
    ) -> None:
        if sparse or ragged:
            raise NotImplementedError(
                "simdist's InputLayer supports dense inputs only (sparse and ragged tensors "
                "are not yet in simdist)."
            )
        if input_shape is None and "batch_input_shape" not in kwargs:
            raise ValueError(
                "InputLayer needs `input_shape` (without the batch axis) or `batch_input_shape`."
            )
        if input_shape is not None:
            kwargs["input_shape"] = input_shape
            kwargs["batch_size"] = batch_size
        if name is None:
            name = f"input_{backend.get_uid('input')}"
        # as Keras 2: floatx by default, never the global mixed-precision policy
        super().__init__(name=name, dtype=dtype or backend.floatx(), **kwargs)
        self.built = True
        self.sparse, self.ragged = False, False

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {
            "batch_input_shape": self._batch_input_shape,
            "dtype": self._dtype,
            "sparse": False,
            "ragged": False,
            "name": self._name,
            "optional": False,  # tf_keras's fields, all of them
        }

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        config.pop("sparse", None)
        config.pop("ragged", None)
        config.pop("optional", None)
        return cls(**config)

    def _symbolic_output(self) -> KerasTensor:
        """The KerasTensor this layer feeds (made once, with its node)."""
        nodes = self.__dict__.get("_inbound_nodes")
        if nodes:
            return nodes[0].outputs
        tensor = KerasTensor(self._batch_input_shape, self._dtype, name=self._name)
        Node(self, (), {}, tensor)
        return tensor


def Input(
    shape=None,
    batch_size=None,
    name=None,
    dtype=None,
    sparse=None,
    tensor=None,
    ragged=None,
    type_spec=None,
    **kwargs,
) -> KerasTensor:
    """A symbolic input of ``shape`` (without the batch axis): the start of a Functional model.

    Args:
        shape: the shape of one example, e.g. ``(32,)`` or ``(None, 8)`` for any length.
        batch_size: a fixed batch size (default: any, ``None``).
        name: the InputLayer's name (``input_1``... by default).
        dtype: the input's dtype (``tf.keras.backend.floatx()`` by default; ``'string'``
            and integer dtypes for preprocessing and embeddings).

    Raises:
        ValueError: neither ``shape`` nor ``batch_shape`` given.
        NotImplementedError: ``sparse``, ``ragged``, ``tensor`` or ``type_spec``.
    """
    if tensor is not None or type_spec is not None:
        raise NotImplementedError(
            "tf.keras.Input(tensor=...) and type_spec= are not yet in simdist; pass shape=."
        )
    batch_shape = kwargs.pop("batch_shape", None)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments to Input: {sorted(kwargs)}")
    if shape is None and batch_shape is None:
        raise ValueError(
            "Please provide to Input a `shape` or a `tensor` or a `type_spec` argument. Note "
            "that `shape` does not include the batch dimension."
        )
    shape = (shape,) if isinstance(shape, int) else shape
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).name
    if batch_shape is not None:
        layer = InputLayer(batch_input_shape=tuple(batch_shape), name=name, dtype=dtype,
                           sparse=sparse, ragged=ragged)
    else:
        layer = InputLayer(input_shape=tuple(shape), batch_size=batch_size, name=name,
                           dtype=dtype, sparse=sparse, ragged=ragged)
    return layer._symbolic_output()

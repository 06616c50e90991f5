"""A layer's ``input``, ``output``, ``input_shape`` and ``output_shape``, read from the calls the
Functional API recorded (its nodes), as Keras 2 gives them.

``layer.output`` is the symbolic output of the layer's first call in a graph (what
``tf.keras.Model(base.input, base.get_layer("block_13_expand_relu").output)`` builds on), a list
when the call has several; ``input`` likewise. ``output_shape`` / ``input_shape`` are shape
tuples (a list of them for several tensors; an ``InputLayer``'s shapes are lists of one),
the same for every call of the layer or an ``AttributeError``. A layer never called on
symbolic tensors has none of them (``AttributeError``, as in Keras).
"""

from __future__ import annotations

from simdist.core import nest
from simdist.keras.engine.keras_tensor import KerasTensor

__all__ = ["NodeAttributes"]


def _one_or_list(values: list):
    return values[0] if len(values) == 1 else values


def _shapes(tensors: list):
    return _one_or_list([tuple(t.shape.as_list()) for t in tensors])


def _inputs_of(node):
    """What the call's first argument was: one tensor, or a list (or other structure)."""
    return node.call_args[0] if node.call_args else node.inbound_tensors[0]


def _input_shapes(node):
    if not node.inbound_tensors:
        return [_shapes(node.output_tensors)]  # an InputLayer's, as Keras 2 gives it
    structure = _inputs_of(node)
    if isinstance(structure, KerasTensor):
        return tuple(structure.shape.as_list())
    shapes = nest.map_structure(
        lambda t: tuple(t.shape.as_list()) if isinstance(t, KerasTensor) else t, structure
    )
    return shapes[0] if isinstance(shapes, list) and len(shapes) == 1 else shapes


class NodeAttributes:
    """The properties above, for a class whose instances may carry ``_inbound_nodes``."""

    def _nodes_or_raise(self, message: str) -> list:
        nodes = self.__dict__.get("_inbound_nodes")
        if not nodes:
            raise AttributeError(message)
        return nodes

    @property
    def input(self):
        """The input tensor(s) of the layer's first call in a graph.

        Raises:
            AttributeError: the layer was never called on symbolic tensors.
        """
        node = self._nodes_or_raise(f"Layer {self.name} is not connected, no input to return.")[0]
        if not node.inbound_tensors:  # an InputLayer's node reads its own tensor
            return node.outputs
        structure = _inputs_of(node)
        return _one_or_list(structure) if isinstance(structure, list) else structure

    @property
    def output(self):
        """The output tensor(s) of the layer's first call in a graph.

        Raises:
            AttributeError: the layer was never called on symbolic tensors.
        """
        return self._nodes_or_raise(f"Layer {self.name} has no inbound nodes.")[0].outputs

    @property
    def input_shape(self):
        """The input shape(s), the same for every call of the layer.

        Raises:
            AttributeError: never called, or called on inputs of different shapes.
        """
        nodes = self._nodes_or_raise(
            f'The layer "{self.name}" has never been called and thus has no defined input '
            "shape. Note that the `input_shape` property is only available for Functional and "
            "Sequential models."
        )
        shapes = [_input_shapes(n) for n in nodes]
        if len({str(shape) for shape in shapes}) != 1:
            raise AttributeError(
                f'The layer "{self.name}" has multiple inbound nodes, with different input '
                'shapes. Hence the notion of "input shape" is ill-defined for the layer.'
            )
        return shapes[0]

    @property
    def output_shape(self):
        """The output shape(s), the same for every call of the layer.

        Raises:
            AttributeError: never called, or calls with outputs of different shapes.
        """
        nodes = self._nodes_or_raise(
            f'The layer "{self.name}" has never been called and thus has no defined output '
            "shape."
        )
        shapes = {str(_shapes(n.output_tensors)) for n in nodes}
        if len(shapes) != 1:
            raise AttributeError(
                f'The layer "{self.name}" has multiple inbound nodes, with different output '
                'shapes. Hence the notion of "output shape" is ill-defined for the layer.'
            )
        shape = _shapes(nodes[0].output_tensors)
        if not nodes[0].inbound_tensors and not isinstance(shape, list):
            return [shape]  # an InputLayer's, as Keras 2 gives it
        return shape


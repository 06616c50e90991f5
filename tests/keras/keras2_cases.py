"""The snippet that checks one deterministic Keras 2 layer against TF 2.21 + tf_keras.

``case_source(expr, shapes, call, masks)`` is a ``tf_differential`` case: it builds the layer
(``expr``, with ``L`` = ``tf.keras.layers``) on inputs from a fixed seed, gives TF's layer
simdist's initial weights, and returns the weight names, the outputs, the gradients of a fixed
random projection of the outputs with respect to every input and trainable weight, the
``compute_output_shape`` of the first input's shape, ``count_params()`` (what ``summary()``
prints), and the output of a layer rebuilt with ``from_config(get_config())`` and given the
same weights.
"""

from __future__ import annotations

import textwrap

__all__ = ["case_source"]

_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        tf.keras.backend.clear_session()  # layer names from a fresh count, as TF's run
        rng = np.random.default_rng({seed})
        xs = [rng.standard_normal(s).astype("float32") for s in {shapes}]
        masks = [tf.constant(m) for m in {masks}]
        L = tf.keras.layers
        layer = {expr}
        inputs = [tf.constant(x) for x in xs]

        def run(layer):
            return {call}

        run(layer)
        if weights is not None:
            layer.set_weights(weights)
        start = layer.get_weights()
        with tf.GradientTape() as tape:
            for t in inputs:
                tape.watch(t)
            out = run(layer)
            outs = tf.nest.flatten(out)
            proj = np.random.default_rng(1)
            loss = tf.add_n([
                tf.reduce_sum(o * proj.standard_normal(tuple(o.shape)).astype("float32"))
                for o in outs
            ])
        grads = tape.gradient(loss, inputs + list(layer.trainable_weights))
        again = type(layer).from_config(layer.get_config())
        run(again)
        again.set_weights(start)
        rebuilt = run(again)
        rebuilt = tf.nest.flatten(rebuilt)
        shape_in = [None, *xs[0].shape[1:]] if len(xs) == 1 else [
            [None, *x.shape[1:]] for x in xs]
        shape_out = layer.compute_output_shape(shape_in)
        shape_out = tf.TensorShape(shape_out).as_list() if not isinstance(
            shape_out, (list, tuple)) or not shape_out or not isinstance(
            shape_out[0], (list, tuple, tf.TensorShape)) else tf.TensorShape(
            shape_out[0]).as_list()
        return {{
            "weights": start,
            "names": np.array([w.name for w in layer.weights] or ["-"]),
            "out": [o.numpy() for o in outs],
            "grads": [np.zeros(1) if g is None else tf.convert_to_tensor(g).numpy()
                      for g in grads],
            "rebuilt": [o.numpy() for o in rebuilt],
            "shape": np.array([-1 if d is None else d for d in shape_out]),
            "params": np.array(layer.count_params()),
        }}
    """
)


def case_source(name: str, expr: str, shapes: list, call: str, masks: list) -> str:
    """The case's source; the input seed comes from ``name``."""
    return _CASE.format(
        seed=sum(map(ord, name)),
        shapes=repr(shapes),
        masks="[" + ", ".join(masks) + "]",
        expr=expr,
        call=call,
    )

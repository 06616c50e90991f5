"""``tf.gradients`` and ``tf.hessians``: TF's graph-mode symbolic gradients, refused.

TF computes these on a graph, so eagerly it refuses them with a ``RuntimeError`` (use
``tf.GradientTape``); simdist does the same. Inside ``tf.function`` TF has a graph to
differentiate and simdist does not (its functions run eagerly and its tape records no
gradients), so there simdist raises ``UnimplementedError`` naming the tape to use instead.
"""

from __future__ import annotations

from simdist import errors
from simdist.core.function import executing_eagerly

__all__ = ["gradients", "hessians"]

_EAGER = (
    "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead."
)


def _refuse(what: str):
    if executing_eagerly():
        raise RuntimeError(_EAGER)
    raise errors.UnimplementedError(
        f"{what} differentiates a graph, and simdist's tf.function runs eagerly without one; "
        "compute the gradient with tf.GradientTape (nested tapes for second derivatives are "
        "not supported either: simdist does not record gradients)."
    )


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients="none"):  # fmt: skip
    """Refused: eagerly ``RuntimeError`` (as TF), in ``tf.function`` ``UnimplementedError``."""
    _refuse("tf.gradients")


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """Refused: eagerly ``RuntimeError`` (as TF), in ``tf.function`` ``UnimplementedError``."""
    _refuse("tf.hessians")

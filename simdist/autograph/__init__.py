"""``tf.autograph``: the switches of TF's Python-to-graph converter.

simdist runs every ``tf.function`` as plain Python (there is no graph to convert to), so
``do_not_convert`` returns the function itself, ``set_verbosity`` and
``experimental.set_loop_options`` change nothing, and ``to_graph`` / ``to_code`` are
refused: they would hand back graph code simdist does not make.
"""

from __future__ import annotations

from simdist.autograph import experimental as experimental
from simdist.autograph.experimental import do_not_convert as _do_not_convert

__all__ = ["experimental", "set_verbosity", "to_code", "to_graph"]


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """AutoGraph's log level (nothing is converted, so nothing is logged)."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"level must be an integer, got {level!r}.")


def to_graph(entity, recursive: bool = True, experimental_optional_features=None):
    """Refused: simdist has no graphs (``NotImplementedError``)."""
    raise NotImplementedError(
        "tf.autograph.to_graph converts Python to graph code; simdist runs functions as "
        "Python and has no graphs. Call the function (or a tf.function of it) directly."
    )


def to_code(entity, recursive: bool = True, experimental_optional_features=None):
    """Refused: simdist has no graphs (``NotImplementedError``)."""
    raise NotImplementedError(
        "tf.autograph.to_code prints the graph code AutoGraph would make; simdist runs "
        "functions as Python and has no graphs."
    )


del _do_not_convert

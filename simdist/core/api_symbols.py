"""Where Keras finds TF's public op functions by their API name (``"nn.relu"``) and back.

A Keras op layer (``TFOpLambda``) is named after the public function it wraps
(``tf.nn.relu``) and saves that name (``"nn.relu"``); loading a model turns the name back
into the function. The public names live in the faces (``simdist.nn``, ``simdist.math``...),
a floor above Keras, so Keras cannot import them: the faces register one :class:`Directory`
here (``simdist.symbolic_dispatch`` does, when ``simdist`` is imported) and Keras asks it.
This module imports nothing.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Directory", "register", "name_of", "resolve"]


class Directory(Protocol):
    """What the faces provide: public function <-> TF API name (without the ``tf.``)."""

    def name_of(self, function) -> str | None:
        """TF's canonical name of ``function`` (``"math.reduce_mean"``), None if not public."""

    def resolve(self, name: str):
        """The public function named ``name`` (``"nn.relu"``, ``"__operators__.add"``), or None."""


_directory: Directory | None = None


def register(directory: Directory) -> None:
    """Install the faces' directory (one per process; a second call replaces the first)."""
    global _directory
    _directory = directory


def name_of(function) -> str | None:
    """TF's canonical API name of ``function``, or None (not a public op, or no directory)."""
    return None if _directory is None else _directory.name_of(function)


def resolve(name: str):
    """The public function for the API name ``name``, or None when there is none."""
    return None if _directory is None else _directory.resolve(name)

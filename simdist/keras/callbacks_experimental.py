"""``tf.keras.callbacks.experimental``: ``BackupAndRestore`` under its Keras 2.7 name.

As in Keras 2 it is a subclass of ``tf.keras.callbacks.BackupAndRestore`` that behaves the
same and warns, on construction, that the name is deprecated.
"""

from __future__ import annotations

import warnings

from simdist.keras._missing import missing_name
from simdist.keras.callbacks_checkpoint import BackupAndRestore as _BackupAndRestore

__all__ = ["BackupAndRestore"]


class BackupAndRestore(_BackupAndRestore):
    """``tf.keras.callbacks.BackupAndRestore`` (deprecated name; see that class)."""

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(
            "`tf.keras.callbacks.experimental.BackupAndRestore` endpoint is deprecated and "
            "will be removed in a future release. Please use "
            "`tf.keras.callbacks.BackupAndRestore`.",
            stacklevel=2,
        )
        super().__init__(*args, **kwargs)


def __getattr__(name: str):
    raise missing_name("tf.keras.callbacks.experimental", name)

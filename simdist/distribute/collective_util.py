"""``tf.distribute.experimental.CommunicationOptions``: how a multi-worker strategy all-reduces.

``CommunicationImplementation`` chooses the cross-worker algorithm (see
:class:`~simdist.distribute.collective_all_reduce_strategy.CollectiveAllReduce` for the
mapping onto :mod:`simdist.collectives`); ``bytes_per_pack`` groups the tensors of one
``batch_reduce_to`` (a step's gradients) into packs reduced by one collective each;
``timeout_seconds`` bounds every cross-worker collective.
"""

from __future__ import annotations

import enum

__all__ = ["CommunicationImplementation", "CollectiveCommunication", "CommunicationOptions"]


class CommunicationImplementation(enum.Enum):
    """Which collective implementation: ``AUTO`` (simdist chooses), ``RING``, ``NCCL``."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


CollectiveCommunication = CommunicationImplementation  # TF's deprecated name


class CommunicationOptions:
    """Options for cross-worker collectives (``tf.distribute.experimental.CommunicationOptions``).

    Args:
        bytes_per_pack: tensors of one batch reduction are concatenated into packs of at
            most this many bytes (a tensor larger than that is a pack of its own); 0, the
            default, lets simdist choose: one pack per dtype.
        timeout_seconds: the deadline of each cross-worker collective, in seconds
            (``None``: ``SIMDIST_WORKER_TIMEOUT``, default 600).
        implementation: a ``CommunicationImplementation`` (or its name).

    Raises:
        ValueError: a negative ``bytes_per_pack``, a non-positive timeout, or an unknown
            implementation.
    """

    def __init__(
        self,
        bytes_per_pack: int = 0,
        timeout_seconds: float | None = None,
        implementation=CommunicationImplementation.AUTO,
    ) -> None:
        if isinstance(bytes_per_pack, bool) or not isinstance(bytes_per_pack, int):
            raise ValueError(f"bytes_per_pack must be an int, got {bytes_per_pack!r}")
        if bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {bytes_per_pack}")
        if timeout_seconds is not None and not timeout_seconds > 0:
            raise ValueError(f"timeout_seconds must be > 0 or None, got {timeout_seconds!r}")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = _implementation(implementation)

    def __repr__(self) -> str:
        return (
            f"CommunicationOptions(bytes_per_pack={self.bytes_per_pack}, timeout_seconds="
            f"{self.timeout_seconds}, implementation={self.implementation})"
        )


def _implementation(value) -> CommunicationImplementation:
    if isinstance(value, CommunicationImplementation):
        return value
    if isinstance(value, str) and value.upper() in CommunicationImplementation.__members__:
        return CommunicationImplementation[value.upper()]
    raise ValueError(
        f"implementation must be a tf.distribute.experimental.CommunicationImplementation "
        f"(AUTO, RING or NCCL), got {value!r}"
    )

"""Known differences: where an implementation deviates from a property, and why.

A record never weakens a property. The runner still runs it; a failure covered by a record
is reported as XFAIL with the record's reason (and a pass as XPASS, so a record that is no
longer needed shows up). Records are keyed by implementation name and property id glob.
"""

from __future__ import annotations

import dataclasses
import fnmatch


@dataclasses.dataclass(frozen=True)
class KnownDifference:
    """An expected deviation of ``impl`` from the properties matching ``property``.

    Attributes:
      impl: the adapter's name (``"tensorflow"``).
      property: a property id or glob.
      reason: what the implementation does instead and why the property keeps its rule.
      versions: the implementation versions it was seen with (free text).
    """

    impl: str
    property: str
    reason: str
    versions: str = ""


KNOWN_DIFFERENCES: tuple[KnownDifference, ...] = (
    KnownDifference(
        "tensorflow",
        "errors.mirrored.none_differing_values",
        "TF applies each replica's own value to its own copy under aggregation NONE, so the "
        "copies silently diverge; simdist refuses (its documented loud choice, "
        "reference/variables.py strict_none).",
        "2.21",
    ),
    KnownDifference(
        "tensorflow",
        "errors.gather.scalar",
        "With one replica TF's per-replica value is a plain tensor and Strategy.gather "
        "returns it unchanged, so a scalar is accepted; with two or more replicas TF "
        "rejects it (ValueError from its all-gather), as the rule says.",
        "2.21",
    ),
    KnownDifference(
        "tensorflow",
        "gather.negative_axis",
        "TF documents Strategy.gather's axis in [0, rank); a negative axis fails inside its "
        "all-gather (ValueError 'Requires start <= limit'). simdist and the reference accept "
        "it and count from the end, as tf.concat does.",
        "2.21",
    ),
)


def find(
    impl: str, property_id: str, records: tuple[KnownDifference, ...] | None = None
) -> KnownDifference | None:
    """The record covering ``property_id`` for ``impl``, or None."""
    for record in KNOWN_DIFFERENCES if records is None else records:
        if record.impl == impl and fnmatch.fnmatchcase(property_id, record.property):
            return record
    return None

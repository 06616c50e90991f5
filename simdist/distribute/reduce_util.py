"""``ReduceOp``: how values from several replicas combine (SUM or MEAN)."""

from __future__ import annotations

import enum

from simdist.core.variables import VariableAggregation

__all__ = ["ReduceOp"]


class ReduceOp(enum.Enum):
    """``tf.distribute.ReduceOp``: ``SUM`` adds the replicas' values; ``MEAN`` averages them.

    ``ReduceOp.from_value`` accepts the enum, its name in any case (``"SUM"``, ``"sum"``), or
    a ``VariableAggregation`` of SUM or MEAN.
    """

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_value(value) -> ReduceOp:
        """The ReduceOp that ``value`` names.

        Raises:
            ValueError: ``value`` names no reduction (the message lists the valid ones).
        """
        if isinstance(value, ReduceOp):
            return value
        if isinstance(value, VariableAggregation):
            return ReduceOp.from_variable_aggregation(value)
        if isinstance(value, str) and value.upper() in ReduceOp.__members__:
            return ReduceOp[value.upper()]
        raise ValueError(
            f"Unknown reduce op {value!r}: use tf.distribute.ReduceOp.SUM or "
            "tf.distribute.ReduceOp.MEAN (or the strings 'SUM' / 'MEAN')."
        )

    @staticmethod
    def from_variable_aggregation(aggregation: VariableAggregation) -> ReduceOp:
        if aggregation is VariableAggregation.SUM:
            return ReduceOp.SUM
        if aggregation is VariableAggregation.MEAN:
            return ReduceOp.MEAN
        raise ValueError(
            f"Could not convert from VariableAggregation.{aggregation.name} to ReduceOp: only "
            "SUM and MEAN reduce."
        )

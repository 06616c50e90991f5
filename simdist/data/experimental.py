"""``tf.data.experimental``: sharding policies, option groups and cardinality (re-exports)."""

from simdist.data.dataset import INFINITE as INFINITE_CARDINALITY
from simdist.data.dataset import UNKNOWN as UNKNOWN_CARDINALITY
from simdist.data.dataset import cardinality as cardinality
from simdist.data.iterator import Optional as Optional
from simdist.data.options import AUTOTUNE as AUTOTUNE
from simdist.data.options import AutoShardPolicy as AutoShardPolicy
from simdist.data.options import AutotuneOptions as AutotuneOptions
from simdist.data.options import DistributeOptions as DistributeOptions
from simdist.data.options import ExternalStatePolicy as ExternalStatePolicy
from simdist.data.options import OptimizationOptions as OptimizationOptions
from simdist.data.options import ThreadingOptions as ThreadingOptions
from simdist.data.transforms import SHARD_HINT as SHARD_HINT

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "AutotuneOptions",
    "SHARD_HINT",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "Optional",
    "ThreadingOptions",
    "cardinality",
]

"""``tf.distribute.cluster_resolver``: cluster specs, resolvers, TF_CONFIG checks (re-exports)."""

from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec as ClusterSpec
from simdist.distribute.cluster_resolver.election import chief_task as chief_task
from simdist.distribute.cluster_resolver.election import id_in_cluster as id_in_cluster
from simdist.distribute.cluster_resolver.election import is_chief as is_chief
from simdist.distribute.cluster_resolver.election import worker_count as worker_count
from simdist.distribute.cluster_resolver.mpi import MPIClusterResolver as MPIClusterResolver
from simdist.distribute.cluster_resolver.mpi import (
    default_cluster_resolver as default_cluster_resolver,
)
from simdist.distribute.cluster_resolver.mpi import in_mpi_job as in_mpi_job
from simdist.distribute.cluster_resolver.mpi import mpi_world_from_env as mpi_world_from_env
from simdist.distribute.cluster_resolver.resolvers import ClusterResolver as ClusterResolver
from simdist.distribute.cluster_resolver.resolvers import (
    SimpleClusterResolver as SimpleClusterResolver,
)
from simdist.distribute.cluster_resolver.resolvers import (
    TFConfigClusterResolver as TFConfigClusterResolver,
)
from simdist.distribute.cluster_resolver.tf_config import TFConfig as TFConfig
from simdist.distribute.cluster_resolver.tf_config import load_tf_config as load_tf_config
from simdist.distribute.cluster_resolver.tf_config import use_tf_config as use_tf_config
from simdist.distribute.cluster_resolver.tf_config import (
    validate_tf_config as validate_tf_config,
)
from simdist.distribute.cluster_resolver.tpu import TPUClusterResolver as TPUClusterResolver

"""The conformance catalogue: every semantic rule simdist implements, as a named property.

Ids are stable (``reduce.mean.partial_batch``) and grouped by area, one module each:
``collectives`` (reduce, all_reduce, gather, all_gather), ``input`` (dataset splitting),
``training`` (loss scaling, the N-versus-1 step), ``variables`` (mirrored, sync-on-read,
checkpoints), ``errors`` (inputs that must be rejected), and ``multi_worker`` /
``multi_worker_input`` (MultiWorkerMirroredStrategy over W x L clusters; their examples are
sized by the adapter's cluster limits), ``tpu`` (TPUStrategy) and ``parameter_server``
(ParameterServerStrategy, partitioners, the ClusterCoordinator). New areas add a module here
and register with the same ``prop`` decorator.
"""

from simdist.testing.properties import collectives as collectives
from simdist.testing.properties import errors as errors
from simdist.testing.properties import input as input
from simdist.testing.properties import multi_worker as multi_worker
from simdist.testing.properties import multi_worker_input as multi_worker_input
from simdist.testing.properties import parameter_server as parameter_server
from simdist.testing.properties import tpu as tpu
from simdist.testing.properties import training as training
from simdist.testing.properties import variables as variables
from simdist.testing.properties._base import CATALOGUE as CATALOGUE
from simdist.testing.properties._base import Property as Property
from simdist.testing.properties._base import Violation as Violation
from simdist.testing.properties._base import describe as describe
from simdist.testing.properties._base import prop as prop
from simdist.testing.properties._base import select as select

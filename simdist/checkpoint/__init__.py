"""Object-based checkpoints: ``Checkpoint``, ``CheckpointManager``, ``latest_checkpoint``, files.

Re-exports only; ``format.py`` documents the files, ``integrity.py`` the checksums and atomic
writes, ``container.py`` the bundles and saved-model directories, ``graph.py`` the keys,
``restore.py`` the matching and deferred restoration, ``checkpoint.py`` the ``Checkpoint``
class, ``state.py`` the ``checkpoint`` state file, ``manager.py`` the retention policy.
Objects take part through the trackable protocol of ``simdist.core.trackable``; this package
imports nothing from Keras. The user's guide is ``docs/checkpoints.md``.
"""

from simdist.checkpoint.checkpoint import Checkpoint as Checkpoint
from simdist.checkpoint.checkpoint import CheckpointOptions as CheckpointOptions
from simdist.checkpoint.manager import CheckpointManager as CheckpointManager
from simdist.checkpoint.reader import CheckpointReader as CheckpointReader
from simdist.checkpoint.reader import list_variables as list_variables
from simdist.checkpoint.reader import load_checkpoint as load_checkpoint
from simdist.checkpoint.reader import load_variable as load_variable
from simdist.checkpoint.restore import CheckpointLoadStatus as CheckpointLoadStatus
from simdist.checkpoint.state import CheckpointState as CheckpointState
from simdist.checkpoint.state import get_checkpoint_state as get_checkpoint_state
from simdist.checkpoint.state import latest_checkpoint as latest_checkpoint

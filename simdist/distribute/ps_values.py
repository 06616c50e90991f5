"""Variables on parameter servers, and the transactions that make asynchronous steps honest.

A ``ParameterServerStrategy`` variable (:class:`PSVariable`) is one copy on one ps task. User
code reads and writes it like any ``tf.Variable``. What changes inside a function the
coordinator runs on a worker (a *closure*): the closure runs as a unit at the moment its
worker starts it, so every read sees the values of that moment, but its writes go into a
:class:`Transaction` and reach the ps only when the closure finishes (later, on the simulated
clock). Other workers' closures that finish in between have already changed the variables,
so a step's gradient is computed from stale values and applied to fresh ones, as on a real
cluster. In detail:

* a read inside a closure sees the closure's own earlier writes (read-your-writes);
* ``assign_add``/``assign_sub`` are replayed as deltas at commit (no update is lost);
  ``assign`` is replayed as the value it computed (the last writer wins);
* an optimizer's per-variable update (``strategy.extended.update``) runs again at commit on
  the live values, atomically, as TF's update kernels run on the ps;
* a closure that fails (its worker dies, or it raises) commits nothing; a commit that
  would touch a failed ps commits nothing and raises ``UnavailableError``.

Outside closures (on the coordinator) reads and writes go straight to the ps.
"""

from __future__ import annotations

import contextlib

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.context import state
from simdist.core.tape import record
from simdist.core.tensor import Tensor
from simdist.core.variables import Variable, _identity_vjp, _VariableHandle
from simdist.distribute.distributed_variables import DistributedVariable

__all__ = ["ClusterState", "PSVariable", "Transaction", "ps_index_of"]


def ps_index_of(device: str) -> int:
    """The ps task index in a device name ``/job:ps/replica:0/task:<i>/...``."""
    return int(device.split("/task:")[1].split("/")[0])


class Transaction:
    """The writes of one closure attempt: its private view and the log replayed at commit."""

    def __init__(self) -> None:
        self.view: dict[int, np.ndarray] = {}  # variable handle id -> value seen by the closure
        self.log: list[tuple] = []
        self.committing = False
        self._quiet = 0

    def read(self, variable: PSVariable) -> np.ndarray | None:
        if self.committing:
            return None
        return self.view.get(variable._handle_id)

    def write(self, variable: PSVariable, op: str, array: np.ndarray) -> None:
        base = self.view.get(variable._handle_id)
        if base is None:
            base = variable._primary._value
        if op == "assign":
            new = np.array(array, dtype=base.dtype)
        elif op == "assign_add":
            new = base + array
        else:
            new = base - array
        self.view[variable._handle_id] = np.asarray(new, dtype=base.dtype)
        if not self._quiet:
            self.log.append(("op", variable, op, array))

    def log_update(self, variable, fn, args, kwargs) -> None:
        self.log.append(("update", variable, fn, args, kwargs))

    @contextlib.contextmanager
    def quiet(self):
        """Writes in this block change the view only (an update that commit will rerun)."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def touched_ps(self) -> list[int]:
        """The ps tasks this transaction would write, in log order (for the health check)."""
        out: list[int] = []
        for entry in self.log:
            for shard in _ps_components(entry[1]):
                if shard._ps_index not in out:
                    out.append(shard._ps_index)
        return out

    def commit(self) -> None:
        """Apply the log to the live variables, in order."""
        self.committing = True
        for entry in self.log:
            if entry[0] == "op":
                _, variable, op, array = entry
                variable._live_write(op, array)
            else:
                _, variable, fn, args, kwargs = entry
                fn(variable, *args, **kwargs)


def _ps_components(variable) -> list[PSVariable]:
    if isinstance(variable, PSVariable):
        return [variable]
    shards = getattr(variable, "variables", None)
    return [s for s in shards or () if isinstance(s, PSVariable)]


class ClusterState:
    """The live state of one virtual ps cluster: which worker runs now, and failed ps tasks.

    The coordinator drives one closure at a time, so this is plain shared state (the replica
    thread of ``strategy.run`` inside a closure sees the same worker and transaction).
    """

    def __init__(self, num_workers: int, num_ps: int) -> None:
        self.num_workers = num_workers
        self.num_ps = num_ps
        self.worker: int | None = None
        self.transaction: Transaction | None = None
        self.failed_ps: dict[int, str] = {}

    @staticmethod
    def worker_device(index: int) -> str:
        return f"/job:worker/replica:0/task:{index}/device:CPU:0"

    @staticmethod
    def ps_device(index: int) -> str:
        return f"/job:ps/replica:0/task:{index}/device:CPU:0"

    @contextlib.contextmanager
    def on_worker(self, index: int, transaction: Transaction | None):
        """Run a block as worker ``index`` (its device scope), writing into ``transaction``."""
        saved = (self.worker, self.transaction, list(state.device_stack))
        self.worker, self.transaction = index, transaction
        state.device_stack.append(self.worker_device(index))
        try:
            yield
        finally:
            self.worker, self.transaction = saved[0], saved[1]
            state.device_stack[:] = saved[2]

    def fail_ps(self, index: int, why: str) -> None:
        self.failed_ps[index] = why

    def check_ps(self, index: int) -> None:
        """Raises ``UnavailableError`` when ps ``index`` has failed."""
        why = self.failed_ps.get(index)
        if why is not None:
            raise errors.UnavailableError(
                f"Task {self.ps_device(index).rsplit('/device', 1)[0]} is unavailable: {why}. "
                "Its variables are lost: restart the cluster (a new strategy and "
                "coordinator) and restore the last checkpoint."
            )


class PSVariable(DistributedVariable):
    """A variable on one ps task (``ParameterServerStrategy``); see the module docstring."""

    _type_name = "PSVariable"

    def __init__(self, strategy, component: Variable, cluster: ClusterState) -> None:
        super().__init__(strategy, [component], component.aggregation)
        self._cluster = cluster
        self._ps_index = ps_index_of(component.device)

    def _open_transaction(self) -> Transaction | None:
        txn = self._cluster.transaction
        return None if txn is None or txn.committing else txn

    def _current(self) -> np.ndarray:
        self._cluster.check_ps(self._ps_index)
        txn = self._open_transaction()
        seen = None if txn is None else txn.read(self)
        return self._primary._value if seen is None else seen

    # --- reading -------------------------------------------------------------------------
    def value(self):
        self._cluster.check_ps(self._ps_index)
        txn = self._open_transaction()
        seen = None if txn is None else txn.read(self)
        if seen is None:
            return self._primary.value()
        comp = self._primary
        for tape in state.tapes:
            tape._on_variable_read(comp)
        out = Tensor(seen, comp._dtype, comp._device)
        record("ReadVariableOp", [_VariableHandle(comp._id)], [out], [_identity_vjp])
        return out

    read_value = value

    def _to_tensor(self, dtype=None):
        if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                f"variable {self.name} of dtype {self.dtype.name}; use tf.cast."
            )
        return self.value()

    def numpy(self):
        value = self._current()
        return value[()] if value.ndim == 0 else value.copy()

    def __array__(self, dtype=None, copy=None):
        return np.array(self._current(), dtype=dtype)

    def _checkpoint_value(self) -> np.ndarray:
        return np.asarray(self._current())

    def __repr__(self) -> str:
        from simdist.core.tensor import _numpy_text

        value = self._primary._value
        return (
            f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
            f"numpy={_numpy_text(value, is_repr=True)}>"
        )

    # --- writing -------------------------------------------------------------------------
    def _apply_write(self, op: str, value, read_value: bool):
        array = self._array(value, op)
        txn = self._open_transaction()
        if txn is None:
            self._live_write(op, array)
        else:
            self._cluster.check_ps(self._ps_index)
            txn.write(self, op, array)
        return self if read_value else None

    def _live_write(self, op: str, array: np.ndarray) -> None:
        self._cluster.check_ps(self._ps_index)
        getattr(self._primary, op)(array, read_value=False)

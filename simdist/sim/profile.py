"""``simdist.sim.profile``: record what a strategy run does, to price it on a topology.

While ``with simdist.sim.profile(topology="dgx-h100") as prof:`` is active, every
``strategy.run`` is one *step*, and the profile records, in program order:

* **collectives** (through :mod:`simdist.core.profile_hook`): every cross-replica
  reduction (``CrossDeviceOps`` / ``cross_device_ops.reduce_arrays``: gradient all-reduces,
  ``ReplicaContext.all_reduce``) and every ``ReplicaContext.all_gather`` component, with its
  replica count, bytes per replica, dtype and the algorithm the strategy's cross-device op
  runs (``NcclAllReduce``: the selector, ``HierarchicalCopyAllReduce``: ``hierarchical``,
  ``ReductionToOneDevice``: ``reduce_broadcast``). One ``batch_reduce_to`` of the gradients
  is one all-reduce per gradient, as simdist runs it (no packing).
* **compute**, per replica, at the Keras layer level: each call of a layer that
  :func:`simdist.cost.layer_costs` models (Conv2D, Dense, pooling, Flatten, Activation, ReLU,
  Dropout) adds that model's forward FLOPs and bytes at the call's batch size; when a
  recording ``GradientTape`` watches the call, its backward ops (kernel and bias gradients for
  trainable layers, the input gradient when the input is itself differentiated) are added when
  ``tape.gradient`` runs on that replica. The optimizer's update (SGD, SGD with momentum,
  Adam) is added on every replica after the gradient all-reduces.

Not counted: raw ops outside Keras layers (losses, metrics, custom layers' own ops: such
layers are listed in the report), host-side work (``strategy.reduce``/``gather`` after the
run: recorded as collectives *outside steps*, not priced), variable creation, and input
copies. The layer hooks are installed on entering the profile and removed on leaving it, so
code run without a profile pays nothing; the collective hooks cost one global read.
:meth:`profile.report` (see :mod:`simdist.sim.profile_report`) prices what was recorded.
"""

from __future__ import annotations

import dataclasses
import os
import threading

import numpy as np

from simdist.core import profile_hook
from simdist.core.compute_description import describe_compute
from simdist.cost.assumptions import StepAssumptions
from simdist.cost.compute import DTYPE_SIZES, OpCost, layer_costs, optimizer_cost
from simdist.cost.nccl_constants import ALGORITHMS as NCCL_ALGORITHMS
from simdist.topology.model import Topology

__all__ = ["profile", "CollectiveRecord", "ComputeRecord", "StepRecord"]


@dataclasses.dataclass(frozen=True)
class CollectiveRecord:
    """One collective: ``num_replicas`` ranks each contributing ``nbytes`` of ``dtype``."""

    kind: str
    num_replicas: int
    nbytes: int
    dtype: str
    itemsize: int
    algorithm: str | None  # None: the selector (NcclAllReduce, all_gather)


@dataclasses.dataclass(frozen=True)
class ComputeRecord:
    """Kernels one replica ran for one layer call (or the optimizer update)."""

    replica: int
    name: str  # the layer's (or optimizer's) name
    phase: str  # "forward", "backward" or "optimizer"
    ops: tuple[OpCost, ...]
    dtype: str

    @property
    def flops(self) -> float:
        return sum(op.flops for op in self.ops)

    @property
    def nbytes(self) -> float:
        return sum(op.nbytes for op in self.ops)


@dataclasses.dataclass
class StepRecord:
    """One ``strategy.run``: its strategy, replica count and items in program order."""

    index: int
    strategy: str
    num_replicas: int
    items: list = dataclasses.field(default_factory=list)  # ComputeRecord | CollectiveRecord


def _compute_dtype(value) -> str:
    name = getattr(getattr(value, "dtype", None), "name", None)
    return name if name in DTYPE_SIZES else "float32"


def _tapes_recording():
    from simdist.core.context import state

    return [t for t in state.tapes if t._recording]


class profile:
    """Record the collectives and compute of ``strategy.run`` steps, then price them.

    Args:
        topology: a :class:`~simdist.topology.model.Topology` or a preset name
            (``simdist.sim.list_topologies()``); replica ``r`` runs on its device ``r``.
        algorithm: ``"auto"`` prices each collective with the algorithm its cross-device op
            runs (where the op selects: NCCL's model and choice on GPU systems, else the
            selector's); ``"nccl"``/``"nccl:ring"``... or a schedule name (``"ring"``...)
            prices every all-reduce with it.
        assumptions: the step model's :class:`~simdist.cost.StepAssumptions` (kernel launch
            and framework overhead per kernel, TF32 matmuls), as ``simdist.cost.price_step``
            uses them; default: its defaults.

    Raises:
        ValueError: an unknown topology or algorithm name; on entering a step, a strategy
            with more replicas than the topology has devices.
        RuntimeError: entering a profile while another is active.
    """

    def __init__(
        self,
        topology: Topology | str = "dgx-h100",
        algorithm: str = "auto",
        assumptions: StepAssumptions | None = None,
    ) -> None:
        if assumptions is not None and not isinstance(assumptions, StepAssumptions):
            raise TypeError(
                f"assumptions must be a simdist.cost.StepAssumptions, got {assumptions!r}"
            )
        if isinstance(topology, str):
            from simdist.topology import get_topology

            topology = get_topology(topology)
        if not isinstance(topology, Topology):
            raise TypeError(
                f"topology must be a simdist Topology or a preset name, got {topology!r}"
            )
        nccl_names = ("nccl", *(f"nccl:{a}" for a in NCCL_ALGORITHMS))
        if algorithm != "auto" and algorithm not in nccl_names:
            from simdist.collectives.algorithms import ALGORITHMS

            if algorithm not in ALGORITHMS["all_reduce"]:
                raise ValueError(
                    f"unknown all-reduce algorithm {algorithm!r}; use 'auto', NCCL's model "
                    f"({', '.join(nccl_names)}) or one of {', '.join(ALGORITHMS['all_reduce'])}"
                )
        self.topology = topology
        self.algorithm = algorithm
        self.assumptions = StepAssumptions() if assumptions is None else assumptions
        self.steps: list[StepRecord] = []
        self.outside: list[CollectiveRecord] = []  # collectives outside any strategy.run
        self.uncounted: dict[str, int] = {}  # "name (Type)" -> calls whose compute is unknown
        self._step: StepRecord | None = None
        self._pending: dict[int, list[ComputeRecord]] = {}  # replica -> backward not yet run
        self._lock = threading.Lock()
        self._report = None

    # --- activation ----------------------------------------------------------------------
    def __enter__(self) -> profile:
        if profile_hook._active is not None:
            raise RuntimeError(
                "a simdist.sim.profile is already active; profiles do not nest. Leave the "
                "other profile's `with` block first."
            )
        profile_hook._active = self
        return self

    def __exit__(self, *exc) -> None:
        profile_hook._active = None
        self._step = None

    # --- recording (called by the hooks) -------------------------------------------------
    def step(self, strategy):
        """The context ``strategy.run`` wraps its replicas in (via ``profile_hook.step``)."""
        n = strategy.num_replicas_in_sync
        if n > self.topology.num_devices:
            raise ValueError(
                f"the strategy has {n} replicas but topology {self.topology.name!r} has only "
                f"{self.topology.num_devices} devices; profile on a topology with at least {n} "
                "devices (e.g. 'h100-cluster:2' has 16) or use fewer replicas"
            )
        return _Step(self, StepRecord(len(self.steps), type(strategy).__name__, n))

    def collective(self, kind: str, arrays: list, algorithm: str | None) -> None:
        first = np.asarray(arrays[0])
        nbytes = max(int(np.asarray(a).nbytes) for a in arrays)
        record = CollectiveRecord(
            kind, len(arrays), nbytes, first.dtype.name, first.dtype.itemsize, algorithm
        )
        with self._lock:
            (self._step.items if self._step is not None else self.outside).append(record)

    def _replica(self) -> int | None:
        from simdist.core.context import state

        ctx = state.replica_context
        if ctx is None or ctx._runner is None or ctx.strategy is None:
            return None
        return ctx._replica_id

    def layer_called(self, layer, inputs) -> None:
        if self._step is not None:
            self._layer_called(layer, inputs)

    def gradient_done(self) -> None:
        if self._step is not None:
            self._flush_backward()

    def optimizer_updated(self, optimizer, pairs) -> None:
        if self._step is not None:
            self._optimizer_update(optimizer, pairs)

    def _layer_called(self, layer, inputs) -> None:
        from simdist.core.tensor import Tensor
        from simdist.keras.engine.training import Model

        replica = self._replica()
        if replica is None or isinstance(layer, Model):
            return  # cross-replica work, or a container whose layers report themselves
        label = f"{layer.name} ({type(layer).__name__})"
        merged = [inputs]
        if isinstance(inputs, (list, tuple)) and inputs and isinstance(inputs[0], Tensor):
            merged = list(inputs)  # a merge layer: its rule reads the inputs from its node
            inputs = inputs[0]
        value = inputs._value if isinstance(inputs, Tensor) else inputs
        if not isinstance(value, np.ndarray) or value.ndim < 1:
            self._count_uncounted(label)
            return
        dtype = _compute_dtype(value)
        try:
            (cost,) = layer_costs([layer], value.shape[1:], max(value.shape[0], 1), dtype)
        except (NotImplementedError, ValueError):
            self._count_uncounted(label)
            return
        backward = list(cost.backward)
        tapes = _tapes_recording()
        input_watched = any(
            isinstance(x, Tensor) and any(x._id in t._watched for t in tapes) for x in merged
        )
        if cost.params:
            if not layer.trainable:
                weight_grads = ("kernel_grad", "bias_grad", "affine_grad")
                backward = [op for op in backward if not op.name.endswith(weight_grads)]
            if input_watched:  # layer_costs leaves out a lone layer's input gradient
                description = describe_compute(
                    layer, tuple(value.shape[1:]), max(value.shape[0], 1), DTYPE_SIZES[dtype]
                )
                backward.extend(description.input_grads)
            differentiated = bool(tapes) and (input_watched or layer.trainable)
        else:
            differentiated = input_watched
        with self._lock:
            forward = ComputeRecord(replica, layer.name, "forward", cost.forward, dtype)
            self._step.items.append(forward)
            if differentiated and backward:
                record = ComputeRecord(replica, layer.name, "backward", tuple(backward), dtype)
                self._pending.setdefault(replica, []).append(record)

    def _count_uncounted(self, label: str) -> None:
        with self._lock:
            self.uncounted[label] = self.uncounted.get(label, 0) + 1

    def _flush_backward(self) -> None:
        replica = self._replica()
        if replica is None:
            return
        with self._lock:
            pending = self._pending.pop(replica, [])
            self._step.items.extend(reversed(pending))  # backward runs in reverse layer order

    def _optimizer_update(self, optimizer, pairs) -> None:
        kind = type(optimizer).__name__.lower()
        if kind == "sgd" and getattr(optimizer, "momentum", 0):
            kind = "momentum"
        label = str(getattr(optimizer, "name", None) or type(optimizer).__name__)
        kept = [v for g, v in pairs if g is not None]
        if kind not in ("sgd", "momentum", "adam") or not kept:
            if kept:
                self._count_uncounted(label)
            return
        dtype = kept[0].dtype.name if kept[0].dtype.name in DTYPE_SIZES else "float32"
        params = sum(int(np.prod(v.shape)) for v in kept)
        op = optimizer_cost(params, kind, dtype)
        with self._lock:
            for r in range(self._step.num_replicas):
                self._step.items.append(ComputeRecord(r, label, "optimizer", (op,), dtype))

    # --- results -------------------------------------------------------------------------
    def report(self):
        """The predicted cost of what was recorded (a :class:`ProfileReport`; ``str`` it).

        Raises:
            ValueError: a recorded collective the topology cannot run (raised by pricing).
        """
        from simdist.sim.profile_report import build_report

        return build_report(self)

    def write_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the steps' timeline as a Chrome trace JSON file (open it in Perfetto)."""
        self.report().write_chrome_trace(path)


class _Step:
    """Open ``record`` as the current step for the duration of one ``strategy.run``."""

    def __init__(self, recorder: profile, record: StepRecord) -> None:
        self._recorder = recorder
        self._record = record

    def __enter__(self) -> StepRecord:
        self._recorder._step = self._record
        self._recorder._pending.clear()
        return self._record

    def __exit__(self, exc_type, *exc) -> None:
        recorder = self._recorder
        recorder._step = None
        recorder._pending.clear()  # backward never asked for: it never ran
        if exc_type is None:  # a run that raised is not a step
            recorder.steps.append(self._record)

"""Fuzz tf.distribute's inputs: ReduceOps, strategy.reduce axes, device strings.

A result is checked against ``reference/`` (``simdist_reference``); a refusal must be a
documented error (docs/errors.md).
"""

import re

import numpy as np
import simdist_reference as ref
from hypothesis import example, given
from hypothesis import strategies as st

import simdist as tf
from simdist.core.device import DeviceSpec, canonical_name
from tests.fuzz.contract import budget, outcome

OPS = st.one_of(
    st.sampled_from(["SUM", "MEAN", "sum", "Mean", "MAX", "", "SUMM", " sum", None, 0, 1.5]),
    st.sampled_from(list(tf.distribute.ReduceOp)),
    st.text(max_size=6),
)
AXES = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.lists(st.integers(-3, 3), max_size=3),
    st.sampled_from(["0", 1.0, True, [None]]),
)

_STRATEGIES = {}


def _strategy(replicas: int):
    if replicas not in _STRATEGIES:
        devices = [f"GPU:{i}" for i in range(replicas)]
        _STRATEGIES[replicas] = tf.distribute.MirroredStrategy(devices)
    return _STRATEGIES[replicas]


@budget(40)
@given(op=OPS)
@example(op="sum")
@example(op="")
@example(op=None)
def test_reduce_op_names(op):
    kind, result = outcome(tf.distribute.ReduceOp.from_value, op)
    try:
        expected = ref.reduce_op_name(op)
    except (TypeError, ValueError):
        expected = None
    if expected is None:
        assert kind == "raised", f"ReduceOp.from_value({op!r}) gave {result!r}"
    else:
        assert kind == "ok" and result.name == expected


@budget(40)
@given(
    replicas=st.integers(1, 3),
    shape=st.lists(st.integers(0, 3), min_size=0, max_size=2).map(tuple),
    op=st.sampled_from(["SUM", "MEAN", "sum", "max", ""]),
    axis=AXES,
)
@example(replicas=2, shape=(2, 3), op="SUM", axis=[0, 0])
@example(replicas=2, shape=(2,), op="MEAN", axis=1)
@example(replicas=2, shape=(0,), op="MEAN", axis=0)
@example(replicas=1, shape=(), op="SUM", axis=[])  # a list axis was a TypeError from inside
@example(replicas=2, shape=(2, 3), op="MEAN", axis=[0, 1])
def test_strategy_reduce_matches_the_reference(replicas, shape, op, axis):
    strategy = _strategy(replicas)
    values = [np.full(shape, r + 1, np.float32) for r in range(replicas)]
    distributed = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(values[ctx.replica_id_in_sync_group])
    )
    kind, result = outcome(strategy.reduce, op, distributed, axis=axis)
    try:
        expected = ref.reduce(op, values, axis)
    except (TypeError, ValueError):
        expected = None
    if expected is None:
        assert kind == "raised", f"reduce({op!r}, axis={axis!r}) gave {result!r}"
        return
    assert kind == "ok", result
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6, equal_nan=True)


_PART = st.sampled_from(["job", "replica", "task", "device"])


@st.composite
def device_names(draw):
    """Valid spellings: the full form, partial forms, and TF's short forms."""
    kind = draw(st.sampled_from(["CPU", "GPU", "TPU", "cpu", "gpu"]))
    index = draw(st.integers(0, 12))
    parts = []
    if draw(st.booleans()):
        parts.append(f"job:{draw(st.sampled_from(['worker', 'chief', 'localhost', 'ps']))}")
    if draw(st.booleans()):
        parts.append(f"replica:{draw(st.integers(0, 3))}")
    if draw(st.booleans()):
        parts.append(f"task:{draw(st.integers(0, 9))}")
    short = draw(st.booleans())
    parts.append(f"{kind}:{index}" if short else f"device:{kind}:{index}")
    slash = draw(st.booleans()) or len(parts) > 1
    return ("/" if slash else "") + "/".join(parts)


_CANONICAL = re.compile(r"^/job:[^/]+/replica:\d+/task:\d+/device:(CPU|GPU|TPU|TPU_SYSTEM):\d+$")


@budget(40)
@given(name=device_names())
@example(name="/job:worker/replica:0/task:1/device:GPU:0")
@example(name="gpu:3")
def test_valid_device_names_are_canonical(name):
    full = canonical_name(name)
    assert _CANONICAL.match(full), full
    assert canonical_name(full) == full
    spec = DeviceSpec.from_string(name)
    assert full.endswith(f"device:{spec.device_type}:{spec.device_index}")


@budget(60)
@given(
    name=st.one_of(
        st.text(max_size=30),
        st.text(alphabet="/:jobtaskdevicGPU0123456789*", max_size=30),
        st.sampled_from(
            ["", "/", "GPU:", "GPU:x", "/task:x", "/job:", "/device:NPU:0", "GPU:-1", 3, None]
        ),
    )
)
@example(name="/task:x")
@example(name="/device:NPU:0")
def test_any_device_string_parses_or_is_refused(name):
    kind, result = outcome(canonical_name, name)
    if kind == "ok":
        assert _CANONICAL.match(result), f"{name!r} -> {result!r}"
        assert canonical_name(result) == result


@budget(25)
@given(
    devices=st.one_of(
        st.lists(device_names(), min_size=1, max_size=3),
        st.lists(st.text(max_size=8), max_size=3),
        st.sampled_from([[], "GPU:0", ["GPU:0", "GPU:0"], [None], 3]),
    )
)
@example(devices=["GPU:0", "GPU:0"])
@example(devices=[])
def test_mirrored_strategy_devices(devices):
    kind, strategy = outcome(tf.distribute.MirroredStrategy, devices)
    if kind == "ok":
        names = list(devices) if isinstance(devices, (list, tuple)) else [devices]
        assert strategy.num_replicas_in_sync == len(names)
        assert len(set(strategy.extended.worker_devices)) == len(names)

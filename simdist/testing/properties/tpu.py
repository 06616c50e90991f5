"""Properties of TPUStrategy: gather shapes, no pure eager run, dynamic batches, host order,
replicas per slice.

Rules: the ``tf.distribute.TPUStrategy`` API page (gather/all_gather need identical shapes;
``run`` needs a ``tf.function``), ``tf.distribute.RunOptions``
(``experimental_enable_dynamic_batch_size``), the TPU guide (partial batches, the order
in which hosts deliver data) and simdist's documented slice table, checked against
``simdist_reference`` (``gather_tpu``, ``simdist_reference.tpu``).
"""

from __future__ import annotations

import numpy as np
import simdist_reference as ref
from hypothesis import strategies as st
from simdist_reference import tpu as ref_tpu

from simdist.testing import strategies as sds
from simdist.testing.properties._base import (
    INVALID_ARGUMENT,
    Violation,
    expect_close,
    expect_equal,
    expect_length,
    expect_raises,
    prop,
)

TPU_DOC = "tf.distribute.TPUStrategy (API page)"
#: one-host slices small enough for drawn per-replica values: 1 and 4 replicas
SMALL_SLICES = ("v5litepod-1", "v4-8")
#: slices of 2 hosts, for the host order
MULTI_HOST_SLICES = ("v4-16",)


@st.composite
def _gather_examples(draw, max_replicas):
    accelerator = draw(st.sampled_from(SMALL_SLICES))
    n = ref_tpu.replicas_per_slice(accelerator)
    same = draw(st.booleans()) if n > 1 else True
    values = draw(
        sds.per_replica_values(
            n, min_replicas=n, min_rank=1, max_rank=2, mismatch=None if same else "batch"
        )
    )
    axis = draw(st.integers(-values[0].ndim, values[0].ndim - 1))
    return {"accelerator": accelerator, "values": values, "axis": axis}


@prop(
    "tpu.gather.identical_shapes",
    "TPUStrategy gather and all_gather concatenate equal shapes in replica order and reject "
    "replicas whose shapes differ, even along the gathered axis.",
    TPU_DOC + " ('gather': all tensors must have exactly the same rank and shape)",
    ["tpu_gather", "tpu_all_gather"],
    _gather_examples,
)
def gather_identical_shapes(adapter, ex):
    values, axis, name = ex["values"], ex["axis"], ex["accelerator"]
    shapes = [v.shape for v in values]
    if len(set(shapes)) > 1:
        for op in ("tpu_gather", "tpu_all_gather"):
            expect_raises(
                INVALID_ARGUMENT,
                lambda op=op: getattr(adapter, op)(name, values, axis),
                f"{op} on {name} of shapes {shapes}",
            )
        return
    expected = ref.gather_tpu(values, axis)
    expect_equal(adapter.tpu_gather(name, values, axis), expected, f"gather(axis={axis})")
    got = adapter.tpu_all_gather(name, values, axis)
    expect_length(got, len(values), "all_gather results")
    for r, g in enumerate(got):
        expect_equal(g, expected, f"all_gather(axis={axis}) on replica {r}")


@prop(
    "tpu.run.eager_refused",
    "TPUStrategy.run of a plain Python function raises NotImplementedError when called "
    "eagerly and runs every replica when called inside a tf.function.",
    TPU_DOC + " ('run': pure eager execution is not supported)",
    ["tpu_run"],
    lambda m: st.sampled_from(SMALL_SLICES),
)
def run_eager_refused(adapter, accelerator):
    expect_raises(
        NotImplementedError,
        lambda: adapter.tpu_run(accelerator, False),
        f"TPUStrategy.run called eagerly on {accelerator}",
    )
    n = ref_tpu.replicas_per_slice(accelerator)
    got = adapter.tpu_run(accelerator, True)
    if [int(i) for i in got] != list(range(n)):
        raise Violation(
            f"run in a tf.function on {accelerator}: replica ids {got}, expected {list(range(n))}"
        )


@st.composite
def _dataset_examples(draw, slices, seeded: bool):
    accelerator = draw(st.sampled_from(slices))
    n = ref_tpu.replicas_per_slice(accelerator)
    batch = draw(st.integers(1, 2 * n + 1))
    length = draw(st.integers(0, 3 * batch))
    return {
        "accelerator": accelerator,
        "elements": np.arange(length, dtype=np.int64),
        "global_batch_size": batch,
        "drop_remainder": draw(st.booleans()),
        "dynamic": draw(st.booleans()) if not seeded else True,
        "seed": draw(st.integers(0, 2**16)) if seeded else None,
    }


def _run_steps(adapter, ex, seed):
    return adapter.tpu_steps(
        ex["accelerator"],
        ex["elements"],
        ex["global_batch_size"],
        ex["drop_remainder"],
        ex["dynamic"],
        seed,
    )


def _expected_steps(ex):
    return ref_tpu.tpu_steps(
        ex["elements"], ex["global_batch_size"], ex["accelerator"], ex["drop_remainder"]
    )


def _check_step_losses(got, expected, ex, what):
    expect_length(got, len(expected), f"{what}: steps")
    for s, ((_, loss), want) in enumerate(zip(got, expected, strict=True)):
        expect_close(
            loss,
            ref_tpu.step_loss(want, ex["global_batch_size"]),
            [np.float64(ex["elements"]) ** 2],
            f"{what}: step {s}'s SUM-reduced loss",
        )


@prop(
    "tpu.dynamic_batch",
    "With TF's default RunOptions a partial final batch runs and the step's summed loss is "
    "the reference's over the real examples; without the dynamic batch size replicas of "
    "different shapes are an invalid argument.",
    "tf.distribute.RunOptions (experimental_enable_dynamic_batch_size, default True); TPU guide",
    ["tpu_steps"],
    lambda m: _dataset_examples(SMALL_SLICES, False),
)
def dynamic_batch(adapter, ex):
    expected = _expected_steps(ex)
    if not ex["dynamic"] and not all(ref_tpu.static_shapes(step) for step in expected):
        expect_raises(
            INVALID_ARGUMENT,
            lambda: _run_steps(adapter, ex, None),
            "a step of per-replica batches of different shapes without the dynamic batch size",
        )
        return
    got = _run_steps(adapter, ex, None)
    _check_step_losses(got, expected, ex, "dynamic" if ex["dynamic"] else "static")
    for s, ((batches, _), want) in enumerate(zip(got, expected, strict=True)):
        expect_length(batches, len(want), f"step {s}'s per-replica batches")
        for r, (b, w) in enumerate(zip(batches, want, strict=True)):
            expect_equal(np.asarray(b, np.int64), w, f"step {s}, replica {r}'s batch")


@prop(
    "tpu.host_order.invariance",
    "Whatever order the hosts deliver their data in, each step holds the same examples and "
    "its SUM-reduced loss does not change; only which replica gets which examples may.",
    "TPU guide (hosts' input order is not guaranteed); simdist_host_order_seed",
    ["tpu_steps"],
    lambda m: _dataset_examples(MULTI_HOST_SLICES, True),
)
def host_order_invariance(adapter, ex):
    expected = _expected_steps(ex)
    plain = _run_steps(adapter, ex, None)
    permuted = _run_steps(adapter, ex, ex["seed"])
    for what, got in (("host order unseeded", plain), (f"seed {ex['seed']}", permuted)):
        _check_step_losses(got, expected, ex, what)
        for s, ((batches, _), want) in enumerate(zip(got, expected, strict=True)):
            expect_equal(
                np.sort(np.concatenate([np.asarray(b, np.int64) for b in batches])),
                np.sort(np.concatenate(want)),
                f"{what}: the examples of step {s}",
            )
            expect_equal(
                sorted(len(b) for b in batches),
                sorted(len(w) for w in want),
                f"{what}: the per-replica batch sizes of step {s}",
            )


@prop(
    "tpu.replicas_per_slice",
    "TPUStrategy has one replica per TPU device of the slice: v3 names count devices, v4 and "
    "v5p names count TensorCores with 2 per device, v5e names count devices.",
    "simdist TPUClusterResolver docs (Google's TPU system-architecture pages)",
    ["tpu_num_replicas"],
    lambda m: st.sampled_from(sorted(ref_tpu.ACCELERATORS)),
)
def replicas_per_slice(adapter, accelerator):
    got = adapter.tpu_num_replicas(accelerator)
    want = ref_tpu.replicas_per_slice(accelerator)
    if int(got) != want:
        raise Violation(f"{accelerator}: {got} replicas, expected {want}")

"""Properties of loss scaling and the training step: the N-versus-1 equivalence.

Rules: the custom-training tutorial ("Define the loss function": scale by the global batch,
SUM across replicas), ``tf.nn.compute_average_loss``, as stated in
``simdist_reference.losses`` and ``simdist_reference.training``.
"""

from __future__ import annotations

import numpy as np
import simdist_reference as ref
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.testing.properties._base import (
    Violation,
    describe,
    expect_close,
    expect_length,
    prop,
)

LOSS_DOC = "tf.nn.compute_average_loss; custom-training tutorial, 'Define the loss function'"


@st.composite
def _losses(draw, m: int, explicit: bool | None = None):
    n = draw(sds.replica_counts(m))
    dtype = draw(st.sampled_from(sds.FLOAT_DTYPES))
    size = st.integers(0, 5)
    losses = [
        np.asarray(
            draw(st.lists(sds.values_for(dtype, 10.0).map(abs), min_size=0, max_size=5)), dtype
        )
        for _ in range(n)
    ]
    if explicit is None:
        explicit = draw(st.booleans())
    if explicit:
        total = sum(len(x) for x in losses)
        batch = draw(st.integers(max(total, 1), max(total, 1) + draw(size)))
    else:
        per = draw(st.integers(1, 5))
        losses = [np.resize(x, per) if x.size else np.ones(per, dtype) for x in losses]
        batch = None
    return {"losses": losses, "global_batch_size": batch}


@prop(
    "loss.compute_average_loss.global_batch",
    "compute_average_loss(l, global_batch_size=B) on each replica is sum(l) / B, whatever "
    "the replica's own batch size (partial and empty batches included).",
    LOSS_DOC,
    ["compute_average_loss"],
    lambda m: _losses(m, explicit=True),
)
def compute_average_loss_global(adapter, ex):
    got = adapter.compute_average_loss(ex["losses"], ex["global_batch_size"])
    expect_length(got, len(ex["losses"]), "compute_average_loss")
    for r, (g, loss) in enumerate(zip(got, ex["losses"], strict=True)):
        expected = ref.compute_average_loss(loss, None, ex["global_batch_size"], len(got))
        expect_close(g, expected, [loss], f"compute_average_loss on replica {r}")


@prop(
    "loss.compute_average_loss.default_global_batch",
    "Without global_batch_size, compute_average_loss divides by the local batch size times "
    "num_replicas_in_sync.",
    LOSS_DOC,
    ["compute_average_loss"],
    lambda m: _losses(m, explicit=False),
)
def compute_average_loss_default(adapter, ex):
    got = adapter.compute_average_loss(ex["losses"], None)
    expect_length(got, len(ex["losses"]), "compute_average_loss")
    for r, (g, loss) in enumerate(zip(got, ex["losses"], strict=True)):
        expected = ref.compute_average_loss(loss, None, None, len(got))
        expect_close(g, expected, [loss], f"compute_average_loss on replica {r}")


@prop(
    "loss.scaled_sum_is_global_mean",
    "The SUM across replicas of the per-replica scaled losses is the mean loss of the "
    "global batch (the tutorial's 1.25 + 2.25 = 3.5).",
    LOSS_DOC,
    ["compute_average_loss", "reduce"],
    lambda m: _losses(m, explicit=True),
)
def scaled_sum_is_global_mean(adapter, ex):
    scaled = adapter.compute_average_loss(ex["losses"], ex["global_batch_size"])
    total = adapter.reduce("SUM", [np.asarray(s) for s in scaled], None)
    everything = np.concatenate([x.astype(np.float64) for x in ex["losses"]])
    expected = np.sum(everything) / ex["global_batch_size"]
    expect_close(total, expected, ex["losses"], "SUM of the scaled losses")


@st.composite
def _step(draw, m: int, min_replicas: int = 1):
    """Per-replica batch sizes (partial and empty included) and a data seed: small to print."""
    n = draw(sds.replica_counts(m, min(min_replicas, m)))
    sizes = [draw(st.integers(0, 3)) for _ in range(n)]
    if sum(sizes) == 0:
        sizes[0] = 1
    return {"sizes": sizes, "seed": draw(st.integers(0, 2**16)), "lr": 0.25}


def _data(ex):
    """The step's parameters and per-replica batches, made from the example's seed."""
    rng = np.random.default_rng(ex["seed"])
    total, d, classes = sum(ex["sizes"]), 3, 4
    x = rng.standard_normal((total, d))
    y = rng.integers(0, classes, total)
    bounds = np.cumsum([0, *ex["sizes"]])
    n = len(ex["sizes"])
    return {
        "params": [rng.standard_normal((d, classes)), rng.standard_normal(classes)],
        "xs": [x[bounds[i] : bounds[i + 1]] for i in range(n)],
        "ys": [y[bounds[i] : bounds[i + 1]] for i in range(n)],
    }


def _single(ex):
    data = _data(ex)
    x, y = np.concatenate(data["xs"]), np.concatenate(data["ys"])
    return ref.train_step_single(data["params"], x, y, ref.softmax_regression, ex["lr"])


def _close(got, want, what) -> None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-9, atol=1e-11):
        ratio = float(np.sum(np.abs(got)) / max(float(np.sum(np.abs(want))), 1e-300))
        raise Violation(
            f"{what}: got {describe(got)}, expected {describe(want)} "
            f"(|got|/|expected| = {ratio:.4g})"
        )


def _run_step(adapter, ex, one_replica: bool = False):
    data = _data(ex)
    xs, ys = data["xs"], data["ys"]
    if one_replica:
        xs, ys = [np.concatenate(xs)], [np.concatenate(ys)]
    return adapter.train_step(data["params"], xs, ys, ex["lr"], sum(ex["sizes"]))


def _summary(ex) -> str:
    return f"per-replica batch sizes {ex['sizes']}"


@prop(
    "training.n_vs_1.equivalence",
    "A step on N replicas (loss scaled by the global batch, gradients SUM-reduced) equals "
    "the single-device step on the whole batch: same loss, same parameters.",
    LOSS_DOC + "; MirroredStrategy's gradient all-reduce",
    ["train_step"],
    _step,
)
def n_vs_1(adapter, ex):
    loss, params = _run_step(adapter, ex)
    want = _single(ex)
    _close(loss, want.loss, f"loss ({_summary(ex)})")
    for r, replica_params in enumerate(params):
        for name, got, expected in zip(("w", "b"), replica_params, want.params, strict=True):
            _close(got, expected, f"{name} on replica {r} after the step ({_summary(ex)})")


@prop(
    "training.n_vs_1.self_consistent",
    "The implementation's own N-replica step equals its own 1-replica step on the "
    "concatenated batch.",
    LOSS_DOC,
    ["train_step"],
    lambda m: _step(m, min_replicas=2),
)
def n_vs_1_self(adapter, ex):
    loss, params = _run_step(adapter, ex)
    loss_1, params_1 = _run_step(adapter, ex, one_replica=True)
    _close(loss, loss_1, f"loss on N replicas vs 1 ({_summary(ex)})")
    for got, expected in zip(params[0], params_1[0], strict=True):
        _close(got, expected, f"parameters on N replicas vs 1 ({_summary(ex)})")


@prop(
    "training.replicas_identical",
    "After a step every replica holds bit-identical parameters.",
    "MirroredStrategy (mirrored variables stay in sync); simdist's determinism contract",
    ["train_step"],
    lambda m: _step(m, min_replicas=2),
)
def replicas_identical(adapter, ex):
    _, params = _run_step(adapter, ex)
    for r, replica_params in enumerate(params[1:], start=1):
        for got, first in zip(replica_params, params[0], strict=True):
            if np.asarray(got).tobytes() != np.asarray(first).tobytes():
                raise Violation(
                    f"replica {r}'s parameters differ from replica 0's ({_summary(ex)})"
                )

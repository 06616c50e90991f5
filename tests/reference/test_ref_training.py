"""Reference training step: N replicas with global-batch scaling equal one device; pitfalls."""

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given
from hypothesis import strategies as st

RTOL, ATOL = 1e-10, 1e-12


def make_problem(model, seed, batch, d=3, k=2):
    rng = np.random.default_rng(seed)
    params = [rng.normal(size=(d, k)), rng.normal(size=(k,))]
    x = rng.normal(size=(batch, d))
    if model is ref.linear_regression:
        y = rng.normal(size=(batch, k))
    else:
        y = rng.integers(0, k, size=batch)
    return params, x, y


def split(x, sizes):
    return ref.split_along(x, sizes, axis=0)


@pytest.mark.parametrize("model", [ref.linear_regression, ref.softmax_regression])
def test_model_gradients_match_finite_differences(model):
    params, x, y = make_problem(model, 0, 5)
    _, grads = model(params, x, y)
    eps = 1e-6
    for i, p in enumerate(params):
        numeric = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            plus = [q.copy() for q in params]
            minus = [q.copy() for q in params]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            numeric[idx] = (model(plus, x, y)[0].sum() - model(minus, x, y)[0].sum()) / (2 * eps)
        np.testing.assert_allclose(grads[i], numeric, rtol=1e-6, atol=1e-7)


@st.composite
def step_case(draw):
    model = draw(st.sampled_from([ref.linear_regression, ref.softmax_regression]))
    replicas = draw(st.integers(1, 8))
    sizes = draw(st.lists(st.integers(0, 4), min_size=replicas, max_size=replicas))
    if sum(sizes) == 0:
        sizes[0] = 1
    seed = draw(st.integers(0, 2**16))
    return model, sizes, seed


@given(step_case())
def test_replicated_step_equals_single_step(case):
    model, sizes, seed = case
    params, x, y = make_problem(model, seed, sum(sizes))
    single = ref.train_step_single(params, x, y, model, lr=0.1)
    replicated = ref.train_step_replicated(
        params, split(x, sizes), split(y, sizes), model, lr=0.1, global_batch_size=sum(sizes)
    )
    assert replicated.loss == pytest.approx(single.loss, rel=RTOL, abs=ATOL)
    for a, b in zip(replicated.params, single.params, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
    for a, b in zip(replicated.grads, single.grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("replicas", [2, 4, 8])
def test_local_mean_then_sum_is_n_times_too_big(replicas):
    params, x, y = make_problem(ref.linear_regression, 1, 2 * replicas)
    sizes = [2] * replicas
    single = ref.train_step_single(params, x, y, ref.linear_regression, lr=0.1)
    wrong = ref.train_step_replicated_local_mean_sum(
        params, split(x, sizes), split(y, sizes), ref.linear_regression, lr=0.1
    )
    assert wrong.loss == pytest.approx(replicas * single.loss, rel=RTOL)
    for a, b in zip(wrong.grads, single.grads, strict=True):
        np.testing.assert_allclose(a, replicas * b, rtol=RTOL, atol=ATOL)


def test_local_mean_then_mean_is_right_only_for_equal_batches():
    params, x, y = make_problem(ref.linear_regression, 2, 6)
    single = ref.train_step_single(params, x, y, ref.linear_regression, lr=0.1)
    even = ref.train_step_replicated_local_mean_mean(
        params, split(x, [3, 3]), split(y, [3, 3]), ref.linear_regression, lr=0.1
    )
    np.testing.assert_allclose(even.grads[0], single.grads[0], rtol=RTOL, atol=ATOL)
    uneven = ref.train_step_replicated_local_mean_mean(
        params, split(x, [4, 2]), split(y, [4, 2]), ref.linear_regression, lr=0.1
    )
    assert not np.allclose(uneven.grads[0], single.grads[0], rtol=1e-6)
    empty = ref.train_step_replicated_local_mean_mean(
        params, split(x, [6, 0]), split(y, [6, 0]), ref.linear_regression, lr=0.1
    )
    assert np.isnan(empty.loss)


def test_tutorial_loss_scaling_inside_a_step():
    # Per-example losses [2, 3] and [4, 5] as a linear model with w=0, b=0, y = -sqrt(2 l):
    # each replica's scaled loss is sum / 4 -> 1.25 and 2.25; the step loss is 3.5.
    losses = np.array([2.0, 3.0, 4.0, 5.0])
    y = np.sqrt(2 * losses)[:, None]
    x = np.zeros((4, 1))
    params = [np.zeros((1, 1)), np.zeros((1,))]
    out = ref.train_step_replicated(
        params,
        split(x, [2, 2]),
        split(y, [2, 2]),
        ref.linear_regression,
        lr=0.0,
        global_batch_size=4,
    )
    assert out.per_replica_losses == pytest.approx((1.25, 2.25))
    assert out.loss == pytest.approx(3.5)


def test_bad_arguments():
    params, x, y = make_problem(ref.linear_regression, 3, 4)
    with pytest.raises(ValueError):
        ref.replica_losses_and_grads(params, [x], [y, y], ref.linear_regression, "global")
    with pytest.raises(ValueError):
        ref.replica_losses_and_grads(params, [x], [y], ref.linear_regression, "sum")

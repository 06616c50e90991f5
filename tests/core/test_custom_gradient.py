"""custom_gradient and recompute_grad: the tape uses grad_fn; variables; under strategy.run."""

import numpy as np
import pytest

import simdist as tf
from tests.gradcheck import check_gradients


@tf.custom_gradient
def _square_with_true_gradient(x):
    return x * x, lambda dy: dy * 2 * x


def test_a_correct_custom_gradient_passes_the_gradient_check():
    check_gradients(_square_with_true_gradient, np.random.default_rng(0).standard_normal(4))


def test_grad_fn_replaces_the_ops_gradient():
    @tf.custom_gradient
    def f(x):
        return tf.exp(x), lambda dy: dy * 0.5

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(f(x) * [1.0, 4.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.5, 2.0])


def test_variables_need_the_keyword_and_get_their_gradients():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            assert variables == [w]
            return dy * w, [dy * x * 2]

        return x * w, grad

    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert [float(g) for g in tape.gradient(y, [x, w])] == [3.0, 4.0]

    @tf.custom_gradient
    def g(x):
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match="'variables'"):
        g(x)


def test_recompute_grad_matches_the_plain_gradient():
    w = tf.Variable([0.5, -1.0])

    def block(x):
        return tf.nn.tanh(x * w) * x

    x = tf.constant([1.0, 2.0])
    grads = []
    for fn in (block, tf.recompute_grad(block)):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(fn(x))
        grads.append([g.numpy() for g in tape.gradient(y, [x, w])])
    for plain, recomputed in zip(*grads, strict=True):
        np.testing.assert_allclose(recomputed, plain, rtol=1e-6)


def test_under_strategy_run_each_replica_uses_grad_fn():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            return dy, [dy * 5.0]

        return x * v, grad

    def step():
        ctx = tf.distribute.get_replica_context()
        x = tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
        with tf.GradientTape() as tape:
            y = f(x)
        return tape.gradient(y, v)

    results = strategy.experimental_local_results(strategy.run(step))
    assert [float(r) for r in results] == [5.0, 5.0]


def test_graph_gradients_are_refused_as_eager_tf_refuses_them():
    x = tf.constant(2.0)
    with pytest.raises(RuntimeError, match="GradientTape"):
        tf.hessians(x * x, x)

    @tf.function
    def inside(v):
        return tf.gradients(v * v, v)

    with pytest.raises(tf.errors.UnimplementedError, match="GradientTape"):
        inside(x)

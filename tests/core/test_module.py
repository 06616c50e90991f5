"""tf.Module: discovery through attributes, lists and dicts, name scopes, checkpoints."""

import os
import sys

import numpy as np
import pytest

import simdist as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "keras"))
import tf_oracle


class Dense(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
        self.b = tf.Variable(tf.zeros([n_out]), name="b")

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


def module_program(tf, make_strategy, payload):
    """The same source on simdist and TensorFlow: names, order, scopes, errors."""

    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
            self.b = tf.Variable(tf.zeros([n_out]), name="b", trainable=False)

        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    class MLP(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.layers = [Dense(2, 3), Dense(3, 1, name="out")]
                self.extra = {
                    "z": tf.Variable(1.0, name="z"),
                    "a": (tf.Variable(2.0), Dense(1, 1, name="d3")),
                }
            self.keras = tf.keras.layers.Dense(2)
            self.keras.build((None, 1))

        @tf.Module.with_name_scope
        def __call__(self, x):
            if not hasattr(self, "late"):
                self.late = tf.Variable(3.0, name="late")
            for layer in self.layers:
                x = layer(x)
            return x

    with tf.name_scope("net"):
        m = MLP()
    y = m(tf.ones([1, 2]))

    def own(variables):  # Keras' own weight names when built outside a call differ (docs)
        return [v.name for v in variables if not v.name.endswith(("kernel:0", "bias:0"))]

    paths = m._flatten(predicate=lambda v: isinstance(v, tf.Variable), with_path=True)
    out = {
        "y": y.numpy(),
        "names": own(m.variables),
        "trainable": own(m.trainable_variables),
        "counts": [len(m.variables), len(m.trainable_variables), len(m.submodules)],
        "submodules": [s.name for s in m.submodules],
        "scopes": [m.name, m.name_scope.name, m.layers[0].name_scope.name],
        "keras_is_module": [isinstance(m.keras, tf.Module)],
        "paths": [str(p) for p, _ in paths],
        "non_recursive": [
            v.name
            for v in m._flatten(recursive=False, predicate=lambda v: isinstance(v, tf.Variable))
        ],
        "camel": [
            type("MyHTTPModule", (tf.Module,), {})().name,
            type("MLP2Layer", (tf.Module,), {})().name,
        ],
    }
    with tf.name_scope("x"):
        with tf.name_scope("y/") as absolute:
            out["absolute"] = [absolute, tf.Variable(1.0).name]
        with tf.name_scope("") as root:
            out["root"] = [root, tf.Variable(1.0, name="r").name]
        with tf.name_scope("x") as same:
            out["not_unique"] = [same, tf.Variable(1.0, name="r").name]
    # Keras under a name scope: a layer built by a call is prefixed, a Sequential model (built
    # as a graph of its own) is not; a replica function starts at the root scope
    with tf.name_scope("outer"):
        dense = tf.keras.layers.Dense(2, name="scoped_dense")
        dense(tf.ones([1, 3]))
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,), name="seq_dense")])
        strategy = make_strategy(2)
        with strategy.scope():
            mirrored = tf.Variable(1.0, name="m")
            made = strategy.run(lambda: tf.Variable(2.0, name="q"))
    out["keras_names"] = [w.name for w in dense.weights + model.weights]
    out["mirrored_names"] = [c.name for c in mirrored.values + made.values]
    for bad in ["a b", "1abc", "a/b"]:
        try:
            tf.Module(name=bad)
            out["bad_" + bad] = ["none"]
        except ValueError as e:
            out["bad_" + bad] = [type(e).__name__]
    return out


@pytest.mark.tensorflow
def test_module_matches_tensorflow():
    theirs = tf_oracle.run_tensorflow(__file__, "module_program", {})
    ours = tf_oracle.run_simdist(module_program, {})
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert ours[key].tolist() == theirs[key].tolist(), key


def test_discovery_order_and_dedup():
    m = tf.Module(name="root")
    shared = tf.Variable(1.0, name="shared")
    m.b = [shared, {"y": tf.Variable(2.0, name="y"), "x": tf.Variable(3.0, name="x")}]
    m.a = shared  # found once, under the first attribute in name order
    m.c = Dense(1, 1, name="child")
    m.c.inner = Dense(1, 1, name="grandchild")
    m.frozen = tf.Variable(4.0, name="frozen", trainable=False)
    names = [v.name for v in m.variables]
    assert names == ["shared:0", "x:0", "y:0", "frozen:0", "b:0", "w:0", "b:0", "w:0"]
    assert "frozen:0" not in [v.name for v in m.trainable_variables]
    assert [s.name for s in m.submodules] == ["child", "grandchild"]
    assert m.c.submodules == (m.c.inner,)


def test_with_name_scope_names_variables_made_in_a_method():
    class Lazy(tf.Module):
        @tf.Module.with_name_scope
        def __call__(self, x):
            if not hasattr(self, "w"):
                self.w = tf.Variable(tf.ones([x.shape[1], 2]))
            return tf.matmul(x, self.w)

    lazy = Lazy()
    assert lazy(tf.ones([1, 3])).shape == (1, 2)
    assert lazy.w.name == "lazy/Variable:0"
    assert Lazy.__call__.__name__ == "__call__"


def test_bad_names_and_a_forgotten_super_init():
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="has space")
    with pytest.raises(ValueError, match="must be a string"):
        tf.name_scope(None)

    class Forgot(tf.Module):
        def __init__(self):
            self.v = tf.Variable(1.0)

    with pytest.raises(RuntimeError, match="super"):
        _ = Forgot().name_scope


def test_checkpoint_round_trip_and_restore_on_append(tmp_path):
    m = tf.Module(name="m")
    m.layers = [Dense(2, 2), Dense(2, 1)]
    m.scale = tf.Variable(5.0)
    path = tf.train.Checkpoint(model=m).save(str(tmp_path / "ckpt"))

    fresh = tf.Module(name="m")
    fresh.layers = []
    fresh.scale = tf.Variable(0.0)
    status = tf.train.Checkpoint(model=fresh).restore(path)
    assert fresh.scale.numpy() == 5.0
    fresh.layers.append(Dense(2, 2))  # restored when it appears
    fresh.layers.append(Dense(2, 1))
    status.assert_consumed()
    for a, b in zip(m.variables, fresh.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert type(fresh.layers).__name__ == "ListWrapper"


def test_custom_training_loop_under_a_strategy():
    strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with strategy.scope():
        model = Dense(2, 1, name="linear")
        optimizer = tf.keras.optimizers.SGD(0.1)
    assert all(type(v).__name__ == "MirroredVariable" for v in model.trainable_variables)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])

    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(tf.reduce_sum(model(x), axis=1), global_batch_size=2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    dist = strategy.experimental_distribute_values_from_function(
        lambda ctx: x[ctx.replica_id_in_sync_group :][:1]
    )
    strategy.run(step, args=(dist,))
    # d(mean of x @ w + b)/dw is the mean row of x: [2, 3]
    np.testing.assert_allclose(model.w.numpy()[:, 0], [1 - 0.2, 1 - 0.3], rtol=1e-6)
    np.testing.assert_allclose(model.b.numpy(), [-0.1], rtol=1e-6)

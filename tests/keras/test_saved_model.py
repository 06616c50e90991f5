"""tf.saved_model for Keras models: save, load, the serving signature, and what is refused.

The signature's names and values against TF 2.21 are in the differential snippet
``saved_model.keras``.
"""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf


def _model():
    tf.random.set_seed(0)
    return tf.keras.Sequential(
        [tf.keras.layers.Dense(4, input_shape=(3,), activation="relu"), tf.keras.layers.Dense(2)]
    )


def test_a_loaded_model_serves_what_the_model_computes(tmp_path):
    model = _model()
    x = np.random.default_rng(0).random((5, 3)).astype(np.float32)
    tf.saved_model.save(model, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    serve = loaded.signatures["serving_default"]
    expected = model(x).numpy()
    assert list(serve(x)) == ["dense_1"]
    np.testing.assert_array_equal(serve(x)["dense_1"].numpy(), expected)
    np.testing.assert_array_equal(serve(dense_input=x)["dense_1"].numpy(), expected)
    np.testing.assert_array_equal(loaded(x).numpy(), expected)
    assert [v.shape for v in loaded.variables] == [v.shape for v in model.variables]
    assert tf.saved_model.contains_saved_model(str(tmp_path / "m"))


def test_the_signature_checks_its_arguments(tmp_path):
    tf.saved_model.save(_model(), str(tmp_path / "m"))
    serve = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"]
    x = np.ones((1, 3), np.float32)
    with pytest.raises(TypeError, match="takes 1 input"):
        serve(x, x)
    with pytest.raises(TypeError, match="unexpected or repeated argument 'images'"):
        serve(images=x)
    with pytest.raises(TypeError, match="missing input"):
        serve()


def test_loading_under_a_strategy_gives_mirrored_variables(tmp_path):
    tf.saved_model.save(_model(), str(tmp_path / "m"))
    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])
    with strategy.scope():
        loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert all(type(v).__name__ == "MirroredVariable" for v in loaded.variables)
    batch = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.ones([2, 3]) * (ctx.replica_id_in_sync_group + 1)
    )
    out = strategy.run(loaded.signatures["serving_default"], args=(batch,))
    first, second = strategy.experimental_local_results(out["dense_1"])
    np.testing.assert_allclose(second.numpy(), loaded(tf.ones([2, 3]) * 2).numpy())
    assert first.shape == (2, 2)


def test_what_simdist_cannot_save_or_read_is_refused(tmp_path):
    with pytest.raises(NotImplementedError, match="tf.train.Checkpoint"):
        tf.saved_model.save(tf.Module(), str(tmp_path / "module"))
    with pytest.raises(NotImplementedError, match="signatures"):
        tf.saved_model.save(_model(), str(tmp_path / "s"), signatures={"f": lambda x: x})
    foreign = tmp_path / "tf_saved"
    foreign.mkdir()
    (foreign / "saved_model.pb").write_bytes(b"\x08\x01")
    with pytest.raises(tf.errors.DataLossError, match="written by TensorFlow"):
        tf.saved_model.load(str(foreign))


def test_an_unbuilt_model_is_saved_as_tf_saves_it_without_functions(tmp_path):
    unbuilt = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    tf.saved_model.save(unbuilt, str(tmp_path / "u"))
    loaded = tf.saved_model.load(str(tmp_path / "u"))
    assert loaded.signatures == {} and loaded.variables == []
    with pytest.raises(ValueError, match="saved before it was built"):
        loaded(np.ones((1, 3), np.float32))
    (tmp_path / "u" / "model_name.txt").write_bytes(b"tampered")
    with pytest.raises(tf.errors.DataLossError):
        tf.saved_model.load(str(tmp_path / "u"))


class _Subclassed(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.head = tf.keras.layers.Dense(3)

    def call(self, inputs):
        return self.head(inputs)


def test_a_subclassed_model_comes_back_with_tf_s_default_names(tmp_path):
    model = _Subclassed()
    assert model.save_spec() is None
    x = np.random.default_rng(1).random((4, 5)).astype(np.float32)
    model(x)
    (spec,), kwargs = model.save_spec()
    described = (spec.shape.as_list(), spec.dtype, spec.name, kwargs)
    assert described == ([None, 5], tf.float32, "input_1", {})
    tf.saved_model.save(model, str(tmp_path / "sub"))
    loaded = tf.saved_model.load(str(tmp_path / "sub"))
    out = loaded.signatures["serving_default"](x)
    assert list(out) == ["output_1"]
    np.testing.assert_array_equal(out["output_1"].numpy(), model(x).numpy())


def test_save_spec_names_the_inputs_as_keras_does():
    seq = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])
    assert seq.save_spec()[0][0].name == "dense_input" or seq.save_spec()[0][0].name.endswith(
        "_input"
    )
    inputs = tf.keras.Input((3,), name="features", dtype=tf.int32)
    functional = tf.keras.Model(inputs, tf.keras.layers.Embedding(10, 2)(inputs))
    (spec,), _ = functional.save_spec()
    assert (spec.name, spec.dtype, spec.shape.as_list()) == ("features", tf.int32, [None, 3])

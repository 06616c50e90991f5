"""Initializers: Keras's fans and limits, statistics, seeding, ``get`` by name."""

import math

import numpy as np
import pytest

from simdist import keras
from simdist.core import random as core_random
from simdist.keras import initializers


def test_glorot_uniform_respects_its_limit_and_variance():
    shape = (3, 3, 16, 32)  # receptive field 9: fan_in 144, fan_out 288
    values = initializers.GlorotUniform(seed=1)(shape).numpy()
    limit = math.sqrt(6 / (144 + 288))
    assert values.dtype == np.float32 and values.shape == shape
    assert np.abs(values).max() <= limit
    assert np.abs(values).max() > 0.95 * limit
    np.testing.assert_allclose(values.var(), limit**2 / 3, rtol=0.05)


@pytest.mark.parametrize(
    "cls,scale_of_fans",
    [
        (initializers.GlorotNormal, lambda fi, fo: 2 / (fi + fo)),
        (initializers.HeNormal, lambda fi, fo: 2 / fi),
        (initializers.LecunNormal, lambda fi, fo: 1 / fi),
    ],
)
def test_truncated_normal_presets_have_the_target_variance(cls, scale_of_fans):
    values = cls(seed=3)((200, 300)).numpy()
    np.testing.assert_allclose(values.var(), scale_of_fans(200, 300), rtol=0.05)
    assert abs(values.mean()) < 0.02 * math.sqrt(scale_of_fans(200, 300))


def test_he_uniform_limit():
    values = initializers.HeUniform(seed=0)((50, 40)).numpy()
    assert np.abs(values).max() <= math.sqrt(6 / 50)


def test_seeded_initializer_returns_the_same_values_every_call():
    init = initializers.RandomNormal(stddev=1.0, seed=5)
    np.testing.assert_array_equal(init((4, 4)).numpy(), init((4, 4)).numpy())
    other = initializers.RandomNormal(stddev=1.0, seed=6)((4, 4)).numpy()
    assert not np.array_equal(other, init((4, 4)).numpy())


def test_unseeded_initializers_follow_the_global_seed():
    core_random.set_seed(11)
    a = initializers.GlorotUniform()((5, 5)).numpy()
    b = initializers.GlorotUniform()((5, 5)).numpy()
    core_random.set_seed(11)
    np.testing.assert_array_equal(initializers.GlorotUniform()((5, 5)).numpy(), a)
    assert not np.array_equal(a, b)


def test_constant_zeros_ones_and_random_ranges():
    np.testing.assert_array_equal(initializers.Constant(2.5)((2,)).numpy(), [2.5, 2.5])
    assert initializers.Zeros()((2, 2), dtype="int32").numpy().dtype == np.int32
    np.testing.assert_array_equal(initializers.Ones()((3,)).numpy(), np.ones(3))
    u = initializers.RandomUniform(-0.1, 0.2, seed=1)((1000,)).numpy()
    assert u.min() >= -0.1 and u.max() < 0.2
    t = initializers.TruncatedNormal(mean=1.0, stddev=0.5, seed=2)((2000,)).numpy()
    assert t.min() >= 0.0 and t.max() <= 2.0


def test_compute_fans():
    assert initializers.compute_fans(()) == (1.0, 1.0)
    assert initializers.compute_fans((7,)) == (7.0, 7.0)
    assert initializers.compute_fans((3, 4)) == (3.0, 4.0)
    assert initializers.compute_fans((2, 2, 3, 5)) == (12.0, 20.0)


def test_get_by_name_and_errors():
    assert isinstance(initializers.get("glorot_uniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get("HeNormal"), initializers.HeNormal)
    assert isinstance(keras.initializers.get("zeros"), initializers.Zeros)
    config = initializers.serialize(initializers.RandomNormal(stddev=2.0, seed=4))
    rebuilt = initializers.deserialize(config)
    assert rebuilt.stddev == 2.0 and rebuilt.seed == 4
    with pytest.raises(ValueError, match="Could not interpret initializer"):
        initializers.get("glorot_sideways")
    with pytest.raises(ValueError, match="mode"):
        initializers.VarianceScaling(mode="fan_sideways")


def test_dense_uses_glorot_uniform_kernel_and_zero_bias():
    layer = keras.layers.Dense(30)
    layer.build((None, 20))
    kernel, bias = layer.get_weights()
    assert np.abs(kernel).max() <= math.sqrt(6 / 50)
    np.testing.assert_array_equal(bias, np.zeros(30))

"""tf.train.Checkpoint(iterator=...): the input position is saved and resumes exactly."""

import numpy as np
import pytest

import simdist as tf
from simdist import errors, train


def _pipeline(seed=3):
    return tf.data.Dataset.range(10).shuffle(10, seed=seed).repeat(2).batch(3)


def _take(iterator, n):
    return [next(iterator).numpy().tolist() for _ in range(n)]


def test_a_restored_iterator_continues_at_the_next_element(tmp_path):
    it = iter(_pipeline())
    _take(it, 3)  # inside the first epoch of the shuffle
    path = train.Checkpoint(iterator=it).save(str(tmp_path / "c"))
    expected = _take(it, 4)  # crosses into the repeat's second (reshuffled) epoch
    fresh = iter(_pipeline())  # as a restarted program would build it
    train.Checkpoint(iterator=fresh).restore(path).assert_consumed()
    assert _take(fresh, 4) == expected
    keys = [k for k, _ in train.list_variables(path)]
    assert keys == [
        "iterator/.ATTRIBUTES/ITERATOR_STATE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    ]


def test_the_epoch_counters_of_the_dataset_are_restored_too(tmp_path):
    tf.random.set_seed(7)  # seed=None below: the op seed comes from the global seed
    ds = _pipeline(seed=None)
    for _ in iter(ds):  # a first full iteration: the shuffle's epochs 0 and 1
        pass
    it = iter(ds)  # epochs 2 and 3 now
    _take(it, 2)
    path = train.Checkpoint(iterator=it).write(str(tmp_path / "c"))
    expected = _take(it, 5)
    expected_next_iteration = _take(iter(ds), 3)
    tf.random.set_seed(7)  # a restarted program: same seeds, fresh epoch counters
    restarted = _pipeline(seed=None)
    resumed = iter(restarted)
    train.Checkpoint(iterator=resumed).read(path).assert_consumed()
    assert _take(resumed, 5) == expected
    assert _take(iter(restarted), 3) == expected_next_iteration
    tf.random.set_seed(None)


def test_an_exhausted_iterator_restores_exhausted(tmp_path):
    it = iter(tf.data.Dataset.range(3))
    assert [int(x) for x in it] == [0, 1, 2]
    path = train.Checkpoint(it=it).write(str(tmp_path / "c"))
    fresh = iter(tf.data.Dataset.range(3))
    train.Checkpoint(it=fresh).read(path)
    with pytest.raises(StopIteration):
        next(fresh)


def test_a_generator_pipeline_is_refused_at_save_as_tf(tmp_path):
    def numbers():
        yield from range(5)

    ds = tf.data.Dataset.from_generator(numbers, output_signature=tf.TensorSpec([], tf.int64))
    it = iter(ds.map(lambda x: x + 1))
    next(it)
    with pytest.raises(errors.FailedPreconditionError, match="from_generator"):
        train.Checkpoint(it=it).write(str(tmp_path / "g"))
    assert list(tmp_path.iterdir()) == []


def test_another_pipeline_is_refused_and_the_iterator_left_alone(tmp_path):
    it = iter(_pipeline())
    _take(it, 2)
    path = train.Checkpoint(it=it).write(str(tmp_path / "c"))
    other = iter(tf.data.Dataset.range(10).batch(3))  # no shuffle op
    with pytest.raises(ValueError, match="different input pipeline"):
        train.Checkpoint(it=other).read(path)
    assert next(other).numpy().tolist() == [0, 1, 2]


def test_model_optimizer_and_iterator_resume_training_bit_identically(tmp_path):
    def setup():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        model.set_weights([np.ones((3, 2), np.float32), np.zeros(2, np.float32)])
        features = np.arange(48, dtype=np.float32).reshape(16, 3) / 48
        labels = np.arange(16) % 2
        ds = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(16, seed=1)
        return model, tf.keras.optimizers.Adam(0.1), iter(ds.repeat().batch(4))

    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(model, optimizer, it):
        x, y = next(it)
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))

    model, optimizer, it = setup()
    for _ in range(3):
        step(model, optimizer, it)
    path = train.Checkpoint(model=model, optimizer=optimizer, it=it).write(str(tmp_path / "c"))
    for _ in range(4):
        step(model, optimizer, it)
    model2, optimizer2, it2 = setup()
    train.Checkpoint(model=model2, optimizer=optimizer2, it=it2).read(path)
    for _ in range(4):
        step(model2, optimizer2, it2)
    for a, b in zip(model.get_weights(), model2.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("from_function", [False, True])
def test_a_distributed_iterator_resumes_at_the_next_step(tmp_path, from_function):
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    if from_function:
        dist = strategy.distribute_datasets_from_function(
            lambda ctx: tf.data.Dataset.range(40).shuffle(40, seed=2).batch(2)
        )
    else:
        dist = strategy.experimental_distribute_dataset(
            tf.data.Dataset.range(40).shuffle(40, seed=2).batch(4)
        )

    def take(it, n):
        return [
            [v.numpy().tolist() for v in strategy.experimental_local_results(next(it))]
            for _ in range(n)
        ]

    it = iter(dist)
    take(it, 2)
    path = train.Checkpoint(it=it).write(str(tmp_path / "d"))
    expected = take(it, 3)
    resumed = iter(dist)
    train.Checkpoint(it=resumed).read(path).assert_consumed()
    assert take(resumed, 3) == expected
    plain = iter(tf.data.Dataset.range(40).shuffle(40, seed=2).batch(4))
    with pytest.raises(ValueError, match="DistributedIterator"):
        train.Checkpoint(it=plain).read(path)


def test_a_multi_host_tpu_iterator_resumes_with_its_host_order(tmp_path, monkeypatch, simdist_env):
    from simdist.distribute import tpu_system

    simdist_env("SIMDIST_TPU", None)
    monkeypatch.delenv("TPU_NAME", raising=False)
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="v4-32")
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        strategy = tf.distribute.TPUStrategy(resolver, simdist_host_order_seed=4)  # 4 hosts
        dataset = tf.data.Dataset.range(32 * 6).batch(32)
        dist = strategy.experimental_distribute_dataset(dataset)

        def take(it, n):
            return [
                [int(v.numpy()[0]) for v in strategy.experimental_local_results(next(it))]
                for _ in range(n)
            ]

        it = iter(dist)
        take(it, 2)
        path = train.Checkpoint(it=it).write(str(tmp_path / "tpu"))
        expected = take(it, 3)  # the host order is permuted per step: steps 2, 3, 4
        resumed = iter(dist)
        train.Checkpoint(it=resumed).read(path)
        assert take(resumed, 3) == expected
    finally:
        tpu_system._state.system = None
        tpu_system._state.connected.clear()
        tf.config.set_virtual_devices(tpus=0)

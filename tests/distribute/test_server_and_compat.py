"""tf.distribute.Server, experimental_set_strategy and tf.compat.v1.ConfigProto."""

import pytest

import simdist as tf
from simdist.distribute.server import started_tasks


def _spec():
    return tf.train.ClusterSpec(
        {"worker": ["localhost:23001", "localhost:23002"], "ps": ["localhost:23003"]}
    )


def test_the_parameter_server_tutorials_in_process_cluster():
    config = tf.compat.v1.ConfigProto()
    config.inter_op_parallelism_threads = 3
    servers = [
        tf.distribute.Server(
            _spec(), job_name="worker", task_index=i, config=config, protocol="grpc"
        )
        for i in range(2)
    ]
    ps = tf.distribute.Server(_spec(), job_name="ps", task_index=0, protocol="grpc")
    assert [s.target for s in servers] == ["grpc://localhost:23001", "grpc://localhost:23002"]
    assert {("worker", 0), ("worker", 1), ("ps", 0)} <= started_tasks()
    assert ps.server_def["job_name"] == "ps"
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(_spec(), rpc_layer="grpc")
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    assert type(strategy).__name__ == "ParameterServerStrategyV2"
    with strategy.scope():
        v = tf.Variable(1.0)
    assert v.device.startswith("/job:ps/replica:0/task:0")
    # the tutorial's custom loop on that cluster
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def dataset_fn():
        return tf.data.Dataset.from_tensor_slices(tf.ones([8, 1])).repeat().batch(2)

    iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))

    @tf.function
    def step(it):
        def replica(x):
            v.assign_add(tf.reduce_sum(x))
            return tf.reduce_sum(x)

        return strategy.run(replica, args=(next(it),))

    results = [coordinator.schedule(step, args=(iterator,)) for _ in range(3)]
    coordinator.join()
    assert [float(r.fetch()) for r in results] == [2.0, 2.0, 2.0]
    assert float(v.numpy()) == 7.0
    with pytest.raises(RuntimeError, match="would block forever"):
        ps.join()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"job_name": "chief", "task_index": 0}, r'task type "chief" is not a job'),
        ({"job_name": "worker", "task_index": 5}, "out of range"),
        ({}, "explicit `job_name`"),
        ({"job_name": "worker"}, "explicit `task_index`"),
        ({"job_name": "ps", "task_index": 0, "protocol": "http"}, "Unknown server protocol"),
    ],
)
def test_server_arguments_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tf.distribute.Server(_spec(), start=False, **kwargs)


def test_experimental_set_strategy_enters_and_leaves():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    tf.distribute.experimental_set_strategy(strategy)
    try:
        assert tf.distribute.get_strategy() is strategy
        with tf.distribute.get_strategy().scope():
            assert tf.Variable(1.0).__class__.__name__ == "MirroredVariable"
    finally:
        tf.distribute.experimental_set_strategy(None)
    assert not tf.distribute.has_strategy()
    with strategy.scope(), pytest.raises(RuntimeError, match="Must not be called inside"):
        tf.distribute.experimental_set_strategy(strategy)


def test_config_proto_refuses_unknown_fields():
    config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    assert config.allow_soft_placement and config.gpu_options.allow_growth
    with pytest.raises(AttributeError, match="no field 'inter_op_threads'"):
        config.inter_op_threads = 2
    with pytest.raises(NotImplementedError, match="no graph mode"):
        tf.compat.v1.disable_eager_execution()

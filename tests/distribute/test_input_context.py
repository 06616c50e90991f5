"""InputContext, ValueContext and InputOptions: TF's fields, messages and validation."""

import pytest

from simdist.distribute.input_context import (
    InputContext,
    InputOptions,
    InputReplicationMode,
    ValueContext,
    validate_input_options,
)


def test_input_context_defaults_and_properties():
    ctx = InputContext()
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == (1, 0, 1)
    ctx = InputContext(num_input_pipelines=3, input_pipeline_id=2, num_replicas_in_sync=6)
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == (3, 2, 6)
    assert str(ctx) == "tf.distribute.InputContext(input pipeline id 2, total: 3)"
    assert repr(ctx) == str(ctx)


def test_per_replica_batch_size():
    assert InputContext(num_replicas_in_sync=4).get_per_replica_batch_size(64) == 16
    with pytest.raises(ValueError) as info:
        InputContext(num_replicas_in_sync=4).get_per_replica_batch_size(10)
    assert str(info.value) == (
        "The `global_batch_size` 10 is not divisible by `num_replicas_in_sync` 4 "
    )


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"num_input_pipelines": 0}, ValueError),
        ({"num_input_pipelines": 2, "input_pipeline_id": 2}, ValueError),
        ({"num_replicas_in_sync": 0}, ValueError),
        ({"input_pipeline_id": -1}, ValueError),
        ({"num_replicas_in_sync": 2.0}, TypeError),
        ({"num_input_pipelines": True}, TypeError),
    ],
)
def test_input_context_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error):
        InputContext(**kwargs)


def test_value_context():
    ctx = ValueContext(replica_id_in_sync_group=1, num_replicas_in_sync=2)
    assert (ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync) == (1, 2)
    assert str(ctx) == "tf.distribute.ValueContext(replica id 1,  total replicas in sync: 2)"
    assert (ValueContext().replica_id_in_sync_group, ValueContext().num_replicas_in_sync) == (0, 1)
    with pytest.raises(ValueError, match="smaller than"):
        ValueContext(replica_id_in_sync_group=2, num_replicas_in_sync=2)


def test_input_options_defaults():
    options = InputOptions()
    assert options.experimental_fetch_to_device is True
    assert options.experimental_replication_mode == InputReplicationMode.PER_WORKER
    assert options.experimental_place_dataset_on_device is False
    assert options.experimental_per_replica_buffer_size == 1
    assert validate_input_options(None, from_function=False) == InputOptions()


def test_input_options_validation_messages():
    with pytest.raises(NotImplementedError, match="PER_REPLICA is only supported"):
        validate_input_options(
            InputOptions(experimental_replication_mode=InputReplicationMode.PER_REPLICA),
            from_function=False,
        )
    with pytest.raises(ValueError, match="you must also specify `PER_REPLICA`"):
        validate_input_options(
            InputOptions(experimental_place_dataset_on_device=True), from_function=True
        )
    with pytest.raises(ValueError, match="can not be set to True when"):
        validate_input_options(
            InputOptions(
                experimental_replication_mode=InputReplicationMode.PER_REPLICA,
                experimental_place_dataset_on_device=True,
            ),
            from_function=True,
        )
    with pytest.raises(ValueError, match="buffer_size"):
        validate_input_options(
            InputOptions(experimental_per_replica_buffer_size=-1), from_function=True
        )
    with pytest.raises(TypeError):
        validate_input_options({"experimental_fetch_to_device": True}, from_function=True)
    ok = InputOptions(
        experimental_fetch_to_device=False,
        experimental_replication_mode=InputReplicationMode.PER_REPLICA,
        experimental_place_dataset_on_device=True,
    )
    assert validate_input_options(ok, from_function=True) is ok

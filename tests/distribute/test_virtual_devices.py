"""tf.config's device surface: physical devices, their logical split, visibility, per process."""

import pytest

import simdist as tf
from simdist.testing import fresh_runtime


def _cpu():
    return tf.config.list_physical_devices("CPU")[0]


def test_devices_are_named_tuples_with_tf_reprs():
    cpu = _cpu()
    assert cpu == ("/physical_device:CPU:0", "CPU")
    assert repr(cpu) == "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    assert repr(tf.config.LogicalDeviceConfiguration()) == (
        "LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, "
        "experimental_device_ordinal=None)"
    )
    assert tf.config.experimental.VirtualDeviceConfiguration is tf.config.LogicalDeviceConfiguration


def test_logical_cpus_split_the_cpu_and_mirrored_strategy_uses_them():
    with fresh_runtime():
        tf.config.set_visible_devices([], "GPU")
        cpu = _cpu()
        assert tf.config.get_logical_device_configuration(cpu) is None
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 3
        )
        assert len(tf.config.get_logical_device_configuration(cpu)) == 3
        names = [d.name for d in tf.config.list_logical_devices()]
        assert names == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
        strategy = tf.distribute.MirroredStrategy()
        assert strategy.num_replicas_in_sync == 3
        assert strategy.extended.worker_devices[2].endswith("/device:CPU:2")
        # the same configuration again is accepted after start; a different one is not
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 3
        )
        with pytest.raises(RuntimeError, match="cannot be modified after being initialized"):
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration()] * 2
            )
        with pytest.raises(RuntimeError, match="Visible devices cannot be modified"):
            tf.config.set_visible_devices(tf.config.list_physical_devices("GPU"), "GPU")
    # the process itself is untouched
    assert len(tf.config.list_logical_devices("CPU")) == 1
    assert tf.config.get_logical_device_configuration(_cpu()) is None


def test_listing_physical_devices_does_not_start_the_runtime():
    with fresh_runtime() as runtime:
        tf.config.list_physical_devices()
        assert not runtime.runtime_started
        tf.config.list_logical_devices()
        assert runtime.runtime_started


def test_logical_gpus_need_a_memory_limit_cpus_refuse_one():
    with fresh_runtime():
        gpu = tf.config.list_physical_devices("GPU")[0]
        with pytest.raises(ValueError, match="memory limit is required for GPU"):
            tf.config.set_logical_device_configuration(
                gpu, [tf.config.LogicalDeviceConfiguration()]
            )
        tf.config.set_logical_device_configuration(
            gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=1024)] * 2
        )
        gpus = len(tf.config.list_physical_devices("GPU"))
        assert len(tf.config.list_logical_devices("GPU")) == gpus + 1
    with fresh_runtime():
        with pytest.raises(ValueError, match="memory limit on CPU virtual devices"):
            tf.config.set_logical_device_configuration(
                _cpu(), [tf.config.LogicalDeviceConfiguration(memory_limit=10)]
            )


@pytest.mark.parametrize(
    "device, configs, match",
    [
        ("CPU:0", [None], "Unrecognized device"),
        (tf.config.PhysicalDevice("/physical_device:GPU:99", "GPU"), [], "Unrecognized device"),
        (None, [], "is empty"),
        (None, [1], "must be a list of tf.config.LogicalDeviceConfiguration"),
    ],
)
def test_bad_logical_configurations_are_value_errors(device, configs, match):
    with fresh_runtime():
        with pytest.raises(ValueError, match=match):
            tf.config.set_logical_device_configuration(device or _cpu(), configs)


def test_memory_growth_is_for_gpus():
    with fresh_runtime():
        gpu = tf.config.list_physical_devices("GPU")[0]
        assert tf.config.experimental.get_memory_growth(gpu) is False
        tf.config.experimental.set_memory_growth(gpu, True)
        assert tf.config.experimental.get_memory_growth(gpu) is True
        with pytest.raises(ValueError, match="non-GPU"):
            tf.config.experimental.set_memory_growth(_cpu(), True)


def test_visible_devices_hide_gpus_and_keep_the_cpu():
    with fresh_runtime():
        gpus = tf.config.list_physical_devices("GPU")
        tf.config.set_visible_devices(gpus[:1], "GPU")
        assert tf.config.get_visible_devices("GPU") == gpus[:1]
        with pytest.raises(ValueError, match="CPU device cannot be hidden"):
            tf.config.set_visible_devices([], "CPU")
        assert [d.name for d in tf.config.list_logical_devices("GPU")] == ["/device:GPU:0"]


def test_a_launched_worker_configures_its_own_host_only():
    before = len(tf.config.list_logical_devices("GPU"))

    def worker():
        tf.config.set_virtual_devices(gpus=5)
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2
        )
        return len(tf.config.list_logical_devices("GPU")), len(
            tf.config.list_logical_devices("CPU")
        )

    assert tf.sim.launch(worker, workers=2, devices_per_worker=1) == [(5, 2), (5, 2)]
    assert len(tf.config.list_logical_devices("GPU")) == before
    assert len(tf.config.list_logical_devices("CPU")) == 1
    assert tf.sim.launch(
        lambda: len(tf.config.list_logical_devices("GPU")), workers=2, devices_per_worker=1
    ) == [1, 1]


def test_execution_switches_read_back():
    assert tf.config.get_soft_device_placement() is True
    tf.config.set_soft_device_placement(False)
    try:
        assert tf.config.get_soft_device_placement() is False
    finally:
        tf.config.set_soft_device_placement(True)
    assert tf.config.experimental.tensor_float_32_execution_enabled() is True

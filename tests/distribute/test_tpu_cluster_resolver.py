"""TPUClusterResolver, experimental_connect_to_cluster and the TPU system (simdist.tpu)."""

import pytest

import simdist as tf
from simdist import errors
from simdist.distribute.cluster_resolver.tpu import TPUClusterResolver, resolve_slice

pytestmark = pytest.mark.usefixtures("fresh_tpu_system")  # tests/distribute/conftest.py


@pytest.mark.parametrize(
    "name, accelerator, cores, hosts",
    [
        ("v3-8", "v3-8", 8, 1),  # 4 chips x 2 TensorCores, each a device
        ("v4-8", "v4-8", 4, 1),  # 4 chips, one megacore device each
        ("v4-32", "v4-32", 16, 4),
        ("v5e-16", "v5litepod-16", 16, 2),  # 1 TensorCore per chip, 8 chips per host
        ("V5LITEPOD-8", "v5litepod-8", 8, 1),
        ("v5p-8", "v5p-8", 4, 1),
    ],
)
def test_accelerator_types_resolve_to_slices(name, accelerator, cores, hosts):
    s = resolve_slice(name)
    assert (s.accelerator_type, s.num_cores, s.num_hosts) == (accelerator, cores, hosts)
    assert s.cores_per_host * hosts == cores
    assert s.topology().num_devices == s.chips


@pytest.mark.parametrize("name", ["v9-8", "tpu-v4-8", "v4-6", "v3-6", "my-tpu"])
def test_unknown_names_list_the_known_ones(name):
    with pytest.raises(ValueError, match="Known TPUs: v3-N, v4-N.*v4-8"):
        TPUClusterResolver(tpu=name)


def test_remote_tpu_cluster_spec_master_and_accelerators():
    r = TPUClusterResolver(tpu="v4-32")
    assert (r.task_type, r.task_id, r.environment) == ("worker", 0, "")
    workers = r.cluster_spec().as_dict()["worker"]
    assert len(workers) == 4 and len(set(workers)) == 4
    assert all(w.endswith(":8470") for w in workers)
    assert r.master() == "grpc://" + workers[0]
    assert r.master("worker", 2) == "grpc://" + workers[2]
    assert r.num_accelerators() == {"TPU": 4}
    assert r.get_job_name() == "worker"


def test_coordinator_job_is_added_to_the_cluster():
    r = TPUClusterResolver(tpu="v4-8", coordinator_name="coordinator", coordinator_address="c:1")
    assert r.cluster_spec().as_dict()["coordinator"] == ["c:1"]


def test_local_tpu_has_no_cluster_and_counts_devices_after_initialization():
    r = TPUClusterResolver(tpu="local")
    assert r.cluster_spec().as_dict() == {}
    assert r.master() == ""
    assert r.num_accelerators() == {"TPU": 0}  # TF: not initialized, no TPU devices listed
    assert r.get_tpu_system_metadata().num_cores == 0
    tf.config.experimental_connect_to_cluster(r)  # a no-op for a local TPU, as TF
    tf.tpu.experimental.initialize_tpu_system(r)
    assert r.num_accelerators() == {"TPU": 8}  # default slice: v3-8
    meta = r.get_tpu_system_metadata()
    assert (meta.num_cores, meta.num_hosts, meta.num_of_cores_per_host) == (8, 1, 8)
    assert meta.devices[0] == "/job:localhost/replica:0/task:0/device:TPU:0"
    assert len(tf.config.list_logical_devices("TPU")) == 8


def test_default_tpu_comes_from_tpu_name_else_local(monkeypatch, simdist_env):
    assert TPUClusterResolver().is_local
    simdist_env("SIMDIST_TPU", "v4-8")
    assert TPUClusterResolver("").simdist_slice.num_cores == 4
    monkeypatch.setenv("TPU_NAME", "v5e-16")
    r = TPUClusterResolver()
    assert not r.is_local and r.simdist_slice.accelerator_type == "v5litepod-16"


def test_a_local_tpu_is_one_host(simdist_env):
    simdist_env("SIMDIST_TPU", "v4-32")
    with pytest.raises(ValueError, match="one host"):
        TPUClusterResolver("local")


def test_grpc_address_is_a_remote_tpu_at_that_address():
    r = TPUClusterResolver("grpc://10.1.2.3:8470")
    assert r.master() == "grpc://10.1.2.3:8470"
    assert r.cluster_spec().as_dict() == {"worker": ["10.1.2.3:8470"]}


def test_remote_tpu_must_be_connected_before_initialization():
    r = TPUClusterResolver(tpu="v4-8")
    with pytest.raises(errors.NotFoundError, match="TPUs not found in the cluster"):
        tf.tpu.experimental.initialize_tpu_system(r)
    tf.config.experimental_connect_to_cluster(r)
    topology = tf.tpu.experimental.initialize_tpu_system(r)
    assert topology.num_tasks == 1 and topology.num_tpus_per_task == 4
    assert r.num_accelerators() == {"TPU": 4}


def test_topology_of_a_multi_host_v3_slice():
    r = TPUClusterResolver(tpu="v3-32")
    tf.config.experimental_connect_to_cluster(r)
    topology = tf.tpu.experimental.initialize_tpu_system(r)
    assert topology.mesh_shape.tolist() == [4, 4, 1, 2]
    assert topology.device_coordinates.shape == (4, 8, 4)
    coords = topology.device_coordinates[2, 5]
    assert topology.task_ordinal_at_coordinates(coords) == 2
    assert topology.tpu_device_ordinal_at_coordinates(coords) == 5
    assert topology.tpu_device_name_at_coordinates(coords) == "/task:2/device:TPU:5"
    assert topology.tpu_device_name_at_coordinates(coords, job="worker") == (
        "/job:worker/task:2/device:TPU:5"
    )
    assert topology.cpu_device_name_at_coordinates(coords) == "/task:2/device:CPU:0"


def test_connect_and_initialize_are_eager_only():
    r = TPUClusterResolver(tpu="v4-8")

    @tf.function
    def connect():
        tf.config.experimental_connect_to_cluster(r)

    @tf.function
    def init():
        tf.tpu.experimental.initialize_tpu_system(r)

    with pytest.raises(ValueError, match="can only be called in eager mode"):
        connect()
    with pytest.raises(RuntimeError, match="not supported within tf.functions"):
        init()
    with pytest.raises(ValueError, match="must be a `ClusterSpec` or a `ClusterResolver`"):
        tf.config.experimental_connect_to_cluster("v4-8")


def test_connect_helper_and_shutdown():
    r = TPUClusterResolver.connect(tpu="v5p-8")
    assert r.num_accelerators() == {"TPU": 4}
    assert r.tpu_hardware_feature is not None
    tf.tpu.experimental.shutdown_tpu_system(r)
    assert r.get_tpu_system_metadata().num_cores == 0
    assert tf.config.list_logical_devices("TPU") == []

"""simdist.sim.profile: a strategy run recorded on virtual devices, priced on a topology."""

import json

import numpy as np
import pytest

import simdist as tf
import simdist.sim as sim
from simdist.core import profile_hook
from simdist.core.tape import GradientTape
from simdist.cost import StepAssumptions, kernel_time, layer_costs, optimizer_cost, roofline_time
from simdist.cost.pricing import price_call
from simdist.distribute.values import PerReplica
from simdist.sim.profile import CollectiveRecord

BATCH = 4  # per replica
FEATURES, HIDDEN, CLASSES = 5, 8, 3


def _setup(num_replicas, cross_device_ops=None):
    strategy = tf.distribute.MirroredStrategy(
        [f"GPU:{i}" for i in range(num_replicas)], cross_device_ops=cross_device_ops
    )
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.layers.Dense(HIDDEN, activation="relu"), tf.keras.layers.Dense(CLASSES)]
        )
        model.build((None, FEATURES))
        optimizer = tf.keras.optimizers.SGD(0.1)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    rng = np.random.default_rng(0)
    x = PerReplica(
        [tf.constant(rng.random((BATCH, FEATURES), dtype=np.float32)) for _ in range(num_replicas)]
    )
    y = PerReplica(
        [tf.constant(rng.random((BATCH, CLASSES), dtype=np.float32)) for _ in range(num_replicas)]
    )
    return strategy, model, step, x, y


def _gradient_sizes(model):
    return [int(np.prod(v.shape)) for v in model.trainable_variables]


@pytest.fixture(scope="module", params=[2, 4])
def profiled(request):
    n = request.param
    strategy, model, step, x, y = _setup(n)
    with sim.profile(topology="dgx-h100") as prof:
        for _ in range(2):
            losses = strategy.run(step, args=(x, y))
            strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)
    return n, model, prof, prof.report()


def test_one_packed_all_reduce_per_step_with_the_gradient_bytes(profiled):
    n, model, prof, _ = profiled
    assert len(prof.steps) == 2
    for step in prof.steps:
        reduces = [r for r in step.items if isinstance(r, CollectiveRecord)]
        # NcclAllReduce(num_packs=1), TF's default: the step's gradients in one pack
        assert [r.nbytes for r in reduces] == [4 * sum(_gradient_sizes(model))]
        assert sum(r.nbytes for r in reduces) == 4 * sum(_gradient_sizes(model))
        assert {(r.kind, r.num_replicas, r.dtype, r.algorithm) for r in reduces} == {
            ("all_reduce", n, "float32", None)  # NcclAllReduce: the selector decides
        }
    # strategy.reduce of the losses after each run: host-side, outside the steps
    assert len(prof.outside) == 2


def test_comm_time_is_the_price_of_the_recorded_all_reduces(profiled):
    n, model, _, report = profiled
    topology = sim.get_topology("dgx-h100")
    packed = 4 * sum(_gradient_sizes(model))  # one pack: one latency term, not one per gradient
    # a GPU preset: NCCL's model and choice, as price_step prices its buckets
    call = price_call("all_reduce", "auto", n, packed, topology, 4)
    assert call.model == "nccl"
    for step in report.steps:
        assert step.comm_time == pytest.approx(call.time, rel=1e-12)
        assert step.collectives[0].algorithm == call.algorithm
        assert step.step_time > 0
        assert step.step_time == pytest.approx(max(step.compute_time) + step.comm_time)
        assert step.bottleneck is None  # NCCL's model prices no links


def _layer_model_ops(model):
    costs = layer_costs(model, (FEATURES,), BATCH)  # first layer: no input gradient
    ops = [op for c in costs for op in c.forward + c.backward]
    ops.append(optimizer_cost(sum(_gradient_sizes(model)), "sgd"))
    return ops


def test_compute_is_the_step_model_of_the_layer_model(profiled):
    # the kernels priced as price_step prices them: roofline + launch + framework overhead
    n, model, _, report = profiled
    device = sim.get_topology("dgx-h100").devices[0]
    ops = _layer_model_ops(model)
    expected = sum(kernel_time(op, device, "float32", StepAssumptions()) for op in ops)
    for step in report.steps:
        assert step.compute_time == pytest.approx((expected,) * n, rel=1e-12)
        assert step.flops == pytest.approx((sum(op.flops for op in ops),) * n)
    assert "# assumption: kernel launch overhead 4 us per kernel" in str(report)


def test_without_overheads_compute_is_the_roofline():
    strategy, model, step, x, y = _setup(2)
    bare = StepAssumptions(launch_overhead=0.0, framework_overhead=0.0, tf32=False)
    with sim.profile(topology="dgx-h100", assumptions=bare) as prof:
        strategy.run(step, args=(x, y))
    device = sim.get_topology("dgx-h100").devices[0]
    expected = sum(roofline_time(op, device) for op in _layer_model_ops(model))
    (priced,) = prof.report().steps
    assert priced.compute_time == pytest.approx((expected,) * 2, rel=1e-12)
    with pytest.raises(TypeError, match="StepAssumptions"):
        sim.profile(assumptions={"launch_overhead": 0})


def test_chrome_trace_has_events_for_every_device(profiled, tmp_path):
    n, _, prof, report = profiled
    path = tmp_path / "trace.json"
    prof.write_chrome_trace(path)
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in complete} == set(range(n))
    for pid in range(n):
        assert {e["tid"] for e in complete if e["pid"] == pid} == {0, 1}  # compute and comm
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in complete)
    assert max(e["ts"] + e["dur"] for e in complete) == pytest.approx(report.total_time * 1e6)


def test_report_text(profiled):
    n, _, _, report = profiled
    text = str(report)
    assert text.startswith("simdist profile on dgx-h100: 2 step(s)")
    assert "No compute/communication overlap modelled." in text
    assert f"step 1 (MirroredStrategy, {n} replicas)" in text
    assert "bottleneck link: not priced (NCCL's model has no per-link loads)" in text


def test_no_profile_records_nothing():
    strategy, _, step, x, y = _setup(2)
    with sim.profile(topology="dgx-h100") as prof:
        assert profile_hook.active() is prof
    assert profile_hook.active() is None
    strategy.run(step, args=(x, y))
    assert prof.steps == [] and prof.outside == []
    # the hooks do not even look at their arguments when no profile is active
    sentinel = object()
    assert profile_hook.record_collective("all_reduce", sentinel) is None
    assert profile_hook.record_components("all_gather", sentinel) is None
    assert profile_hook.layer_called(sentinel, sentinel) is None
    assert profile_hook.gradient_done() is None
    assert profile_hook.optimizer_updated(sentinel, sentinel) is None
    with profile_hook.step(sentinel):
        pass


def test_too_few_topology_devices():
    strategy, _, step, x, y = _setup(4)
    with sim.profile(topology="pcie-8gpu"):
        pass
    with sim.profile(topology="v3-8") as prof:  # 4 devices: fits
        strategy.run(step, args=(x, y))
    assert len(prof.steps) == 1
    pair = sim.topology.builders.fully_connected(2, 100e9, 1e-6)
    with sim.profile(topology=pair) as prof:
        with pytest.raises(ValueError, match="4 replicas .*'fully-connected-2' has only 2 dev"):
            strategy.run(step, args=(x, y))
    assert prof.steps == []


@pytest.mark.parametrize(
    "ops, algorithm",
    [
        (tf.distribute.HierarchicalCopyAllReduce(), "hierarchical"),
        (tf.distribute.ReductionToOneDevice(), "reduce_broadcast"),
    ],
)
def test_recorded_algorithm_follows_cross_device_ops(ops, algorithm):
    strategy, _, step, x, y = _setup(2, ops)
    with sim.profile(topology="dgx-h100") as prof:
        strategy.run(step, args=(x, y))
    report = prof.report()
    priced = report.steps[0].collectives
    assert {p.record.algorithm for p in priced} == {algorithm}
    assert {p.cost.algorithm for p in priced} == {algorithm}


def test_algorithm_override_and_all_gather_and_no_backward_without_gradient():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])

    def fn():
        ctx = tf.distribute.get_replica_context()
        value = tf.ones((3, 2)) * tf.cast(ctx.replica_id_in_sync_group, tf.float32)
        ctx.all_gather(value, axis=0)
        return ctx.all_reduce("sum", value)

    with sim.profile(topology="dgx-h100", algorithm="ring") as prof:
        strategy.run(fn)
    (step,) = prof.report().steps
    kinds = [(p.record.kind, p.algorithm, p.record.nbytes) for p in step.collectives]
    # all_gather keeps its own (selected) algorithm; the all-reduce is forced to ring
    assert kinds[0][0] == "all_gather" and kinds[0][2] == 24
    assert kinds[1] == ("all_reduce", "ring", 24)
    assert step.compute_time == (0.0, 0.0)  # raw ops outside Keras layers are not counted


def test_forward_only_counts_no_backward():
    strategy, model, _, x, _ = _setup(2)
    with sim.profile(topology="dgx-h100") as prof:
        strategy.run(lambda v: model(v), args=(x,))
    phases = [r.phase for r in prof.steps[0].items]
    assert phases == ["forward"] * 4


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown all-reduce algorithm 'bogus'"):
        sim.profile(algorithm="bogus")
    with pytest.raises(ValueError):
        sim.profile(topology="no-such-machine")
    with sim.profile():
        with pytest.raises(RuntimeError, match="already active"):
            with sim.profile():
                pass
    assert profile_hook.active() is None
    assert GradientTape.gradient.__name__ == "gradient"


def test_schedule_model_off_gpu_systems_and_nccl_names_on_them():
    strategy, model, step, x, y = _setup(4)
    with sim.profile(topology="v3-8") as prof:  # a TPU torus: no GpuSystem, the schedule
        strategy.run(step, args=(x, y))
    (priced,) = prof.report().steps[0].collectives
    assert priced.cost.model == "schedule" and prof.report().steps[0].bottleneck is not None
    with sim.profile(topology="dgx-h100", algorithm="nccl:ring") as prof:
        strategy.run(step, args=(x, y))
    (priced,) = prof.report().steps[0].collectives
    assert priced.cost.model == "nccl" and priced.algorithm.startswith("nccl:ring/")

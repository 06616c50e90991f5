"""Non-callables and non-integer fault steps are refused at the public boundary (issue 18)."""

import numpy as np
import pytest

import simdist as tf
from simdist.distribute.faults import FaultPlan


def test_strategy_run_refuses_a_non_callable():
    strategy = tf.distribute.MirroredStrategy(["CPU:0"])
    with pytest.raises(TypeError, match="strategy.run needs a callable"):
        strategy.run(5)


def test_distribute_values_from_function_refuses_a_non_callable():
    strategy = tf.distribute.MirroredStrategy(["CPU:0"])
    with pytest.raises(TypeError, match="needs a callable value_fn"):
        strategy.experimental_distribute_values_from_function(3)


def test_sim_launch_refuses_a_non_callable():
    with pytest.raises(TypeError, match="launch needs a callable"):
        tf.sim.launch(5, workers=2)


@pytest.mark.parametrize("step", [1.7, 2.0, "1", True])
def test_kill_worker_refuses_a_non_integer_step(step):
    with pytest.raises(ValueError, match="step must be an integer"):
        FaultPlan().kill_worker(0, step=step)


def test_kill_worker_accepts_numpy_integers():
    plan = FaultPlan().kill_worker(np.int64(1), step=np.int32(2))
    assert plan.worker_failures[-1].step == 2

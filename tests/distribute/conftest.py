"""Fixtures of the distribute tests."""

import pytest


@pytest.fixture
def fresh_tpu_system(monkeypatch, simdist_env):
    """No simulated TPU system before the test (no SIMDIST_TPU, no TPU_NAME) and none after
    it: the system, its connections, the virtual TPUs and eager tf.functions are reset."""
    import simdist as tf
    from simdist.distribute import tpu_system

    simdist_env("SIMDIST_TPU", None)
    monkeypatch.delenv("TPU_NAME", raising=False)
    yield
    tpu_system._state.system = None
    tpu_system._state.connected.clear()
    tf.config.set_virtual_devices(tpus=0)
    tf.config.run_functions_eagerly(False)

"""Run one small program on simdist (in this process) and on TensorFlow 2.21 + tf_keras.

A *program* is a function ``program(tf, make_strategy, payload) -> {name: array}`` in a test
module: the same source runs with ``tf`` bound to ``simdist`` and, in a subprocess, to real
TensorFlow with Keras 2 (``TF_USE_LEGACY_KERAS=1``) on 4 logical CPUs. ``make_strategy(n)``
gives the default strategy for ``n == 1`` and a ``MirroredStrategy`` over ``n`` devices
otherwise. One TensorFlow process per call: batch every case of a test module into one
payload.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

TF_DEVICES = 4

_BOOT = r"""
import importlib.util, json, os, sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * {n})
sys.path.insert(0, os.path.dirname(sys.argv[1]))
spec = importlib.util.spec_from_file_location("program_module", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
_strategies = {{}}
def make_strategy(n):
    if n == 1:
        return tf.distribute.get_strategy()
    if n not in _strategies:
        # collective group keys of their own per replica count (TF numbers every
        # MirroredStrategy's groups from one base: a 2- and a 4-replica one would collide)
        cls = type(f"MirroredStrategy{{n}}", (tf.distribute.MirroredStrategy,),
                   {{"_collective_key_base": 100_000 * n}})
        _strategies[n] = cls([f"/cpu:{{i}}" for i in range(n)])
    return _strategies[n]
with open(sys.argv[3]) as f:
    payload = json.load(f)
out = getattr(module, sys.argv[2])(tf, make_strategy, payload)
np.savez(sys.argv[4], **{{k: np.asarray(v) for k, v in out.items()}})
"""


def simdist_strategy(n: int):
    import simdist

    if n == 1:
        return simdist.distribute.get_strategy()
    return simdist.distribute.MirroredStrategy([f"/gpu:{i}" for i in range(n)])


def run_simdist(program, payload: dict) -> dict:
    import simdist

    out = program(simdist, simdist_strategy, json.loads(json.dumps(payload)))
    return {k: np.asarray(v) for k, v in out.items()}


def run_tensorflow(module_file: str, program_name: str, payload: dict, timeout=600) -> dict:
    """The program's results on real TensorFlow (skips the test where it is not installed)."""
    for name in ("tensorflow", "tf_keras"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (pip install 'simdist[tensorflow]')")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    with tempfile.TemporaryDirectory() as tmp:
        boot = os.path.join(tmp, "boot.py")
        with open(boot, "w") as f:
            f.write(_BOOT.format(n=TF_DEVICES))
        payload_file = os.path.join(tmp, "payload.json")
        with open(payload_file, "w") as f:
            json.dump(payload, f)
        result = os.path.join(tmp, "out.npz")
        done = subprocess.run(
            [sys.executable, boot, module_file, program_name, payload_file, result],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise AssertionError(f"the TensorFlow program failed:\n{done.stderr[-4000:]}")
        with np.load(result) as data:
            return {k: data[k] for k in data.files}


def assert_same(ours: dict, theirs: dict, rtol=1e-5, atol=1e-6) -> None:
    """Every result of TensorFlow's run is in ours, with the same shape and close values."""
    assert sorted(ours) == sorted(theirs), sorted(set(ours) ^ set(theirs))
    bad = []
    for key in sorted(theirs):
        a, b = ours[key], theirs[key]
        if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            bad.append(f"{key}: simdist {a.tolist()} vs TensorFlow {b.tolist()}")
    assert not bad, "\n".join(bad[:20]) + f"\n({len(bad)} of {len(theirs)} differ)"

"""Run one Keras snippet on simdist and on real TensorFlow 2.21 + tf_keras, and compare.

A case is Python source defining ``case(tf, np, weights, devices)``; it returns a dict of
arrays (or lists of arrays). It runs first on simdist (``tf`` = simdist, ``weights=None``,
``devices`` = virtual GPUs), then on TF (``weights`` = what simdist's run returned under
``"weights"``, so both start from the same values; ``devices`` = logical CPUs). TF runs in
ONE subprocess per batch of cases (``TF_USE_LEGACY_KERAS=1``: the Keras 2 of the source
documents), so the test process never imports TensorFlow.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

import simdist

__all__ = ["tf_available", "run_simdist", "run_tf", "assert_match"]

_RUNNER = textwrap.dedent(
    """
    import json, os, sys, traceback
    import numpy as np
    import tensorflow as tf
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration()] * 4)
    spec = json.load(open(sys.argv[1]))
    given = np.load(sys.argv[2], allow_pickle=False)
    out, failures = {}, {}
    for name, item in spec.items():
        weights = None
        if item["n_weights"] is not None:
            weights = [given[f"{name}|{i}"] for i in range(item["n_weights"])]
        devices = [f"/cpu:{i}" for i in range(item["devices"])]
        scope = {}
        try:
            tf.keras.backend.clear_session()
            exec(item["source"], scope)
            result = scope["case"](tf, np, weights, devices)
            for key, value in result.items():
                values = value if isinstance(value, (list, tuple)) else [value]
                for i, v in enumerate(values):
                    v = np.asarray(v)
                    if v.dtype.kind in "OS":  # text: npz without pickle holds str arrays
                        v = np.vectorize(
                            lambda t: t.decode() if isinstance(t, bytes) else str(t),
                            otypes=[str])(v) if v.size else v.astype(str)
                    out[f"{name}|{key}|{i}"] = v
        except Exception:
            failures[name] = traceback.format_exc()
    np.savez(sys.argv[3], **out)
    json.dump(failures, open(sys.argv[4], "w"))
    """
)


def tf_available() -> bool:
    """Whether TensorFlow and tf_keras are installed (the ``tensorflow`` extra)."""
    return all(importlib.util.find_spec(m) is not None for m in ("tensorflow", "tf_keras"))


def _listify(result: dict) -> dict:
    out = {}
    for key, value in result.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        out[key] = [np.asarray(getattr(v, "numpy", lambda v=v: v)()) for v in values]
    return out


def run_simdist(source: str, devices: int = 1) -> dict:
    """Run ``case`` on simdist; returns ``{key: [arrays]}``."""
    scope: dict = {}
    exec(source, scope)
    names = [f"GPU:{i}" for i in range(devices)]
    return _listify(scope["case"](simdist, np, None, names))


def run_tf(cases: dict, timeout: float = 600) -> tuple[dict, dict]:
    """Run ``{name: (source, simdist_result, devices)}`` on TF in one subprocess.

    Returns ``({name: {key: [arrays]}}, {name: traceback})``.
    """
    spec, given = {}, {}
    for name, (source, ours, devices) in cases.items():
        weights = ours.get("weights")
        spec[name] = {
            "source": source,
            "n_weights": None if weights is None else len(weights),
            "devices": devices,
        }
        for i, w in enumerate(weights or []):
            given[f"{name}|{i}"] = w
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f) for f in ("spec.json", "in.npz", "out.npz", "err.json")]
        with open(paths[0], "w") as f:
            json.dump(spec, f)
        np.savez(paths[1], **given)
        env = {
            **os.environ,
            "TF_USE_LEGACY_KERAS": "1",
            "TF_CPP_MIN_LOG_LEVEL": "3",
            "CUDA_VISIBLE_DEVICES": "",
        }
        done = subprocess.run(
            [sys.executable, "-c", _RUNNER, *paths],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the TF subprocess failed:\n{done.stderr[-4000:]}")
        with open(paths[3]) as f:
            failures = json.load(f)
        results: dict = {name: {} for name in cases}
        with np.load(paths[2], allow_pickle=False) as data:
            for key in data.files:
                name, field, index = key.split("|")
                results[name].setdefault(field, []).append((int(index), data[key]))
    ordered = {
        name: {k: [v for _, v in sorted(items, key=lambda p: p[0])] for k, items in r.items()}
        for name, r in results.items()
    }
    return ordered, failures


def _text(values) -> np.ndarray:
    values = np.asarray(values)
    if not values.size:
        return values.astype(str)
    return np.vectorize(lambda t: t.decode() if isinstance(t, bytes) else str(t), otypes=[str])(
        values
    )


def assert_match(
    name: str, ours: dict, theirs: dict, rtol: float, atol: float, skip=("weights",)
) -> None:
    """Every key of ``ours`` (but ``skip``) equals TF's within tolerance."""
    for key, values in ours.items():
        if key in skip or (not values and key not in theirs):
            continue
        assert key in theirs, f"{name}: TF returned no {key!r}"
        assert len(values) == len(theirs[key]), f"{name}/{key}: {len(values)} vs {len(theirs[key])}"
        for i, (a, b) in enumerate(zip(values, theirs[key], strict=True)):
            if a.dtype.kind in "OSU" or b.dtype.kind in "OSU":
                np.testing.assert_array_equal(_text(a), _text(b), err_msg=f"{name}/{key}[{i}]")
                continue
            np.testing.assert_allclose(
                np.asarray(a, np.float64),
                np.asarray(b, np.float64),
                rtol=rtol,
                atol=atol,
                err_msg=f"{name}/{key}[{i}] simdist vs TF",
            )

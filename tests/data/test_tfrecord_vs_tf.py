"""TFRecord files, tf.train.Example, parsing and tensor serialization against TF 2.21.

Each case in ``tfrecord_cases.py`` is the source of ``case(tf, np, root, side)``: it runs on
simdist (in this process) and on TensorFlow (one subprocess for all cases) and returns a
JSON-able dict; the two dicts must be equal. Errors are caught by ``attempt(fn)`` on both
sides as ``["error", class name, message]`` (TF's op suffixes removed).

Files cross over: ``write_*`` cases write under ``root/<side>/``; after both sides wrote,
``read_*`` cases read ``root/simdist`` and ``root/tf`` on both sides (so TF reads simdist's
files and simdist TF's), and compare the bytes of the uncompressed files.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import simdist
from tests.data import tfrecord_cases

pytestmark = [pytest.mark.tensorflow, pytest.mark.slow]

_PRELUDE = r'''
import re as _re

def _clean(message):
    message = _re.sub(r"\{\{function_node [^}]*\}\}\s*", "", message)
    message = _re.sub(r"\s*\[Op:\w+\].*$", "", message, flags=_re.S)
    return message.strip()

def attempt(fn):
    try:
        return ["ok", fn()]
    except Exception as exc:  # noqa: BLE001 - the class and message are the result
        return ["error", type(exc).__name__, _clean(str(exc))]

def array(value):
    """A tensor, SparseTensor or array as JSON: dtype, shape, flat values (bytes as hex)."""
    if hasattr(value, "dense_shape"):
        return {"sparse": [array(value.indices), array(value.values), array(value.dense_shape)]}
    value = value.numpy() if hasattr(value, "numpy") else value
    import numpy as _np
    value = _np.asarray(value)
    flat = value.reshape(-1).tolist()
    flat = [v.hex() if isinstance(v, bytes) else v for v in flat]
    flat = ["nan" if isinstance(v, float) and v != v else v for v in flat]
    name = "string" if value.dtype == object or value.dtype.kind == "S" else str(value.dtype)
    return {"dtype": name, "shape": list(value.shape), "values": flat}

def arrays(result):
    return {k: array(v) for k, v in result.items()}
'''

_RUNNER = r'''
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
cases = json.load(open(sys.argv[1]))
root = sys.argv[2]
out = {}
for phase in ("write", "read"):
    for name, source in cases.items():
        if not name.startswith(phase):
            continue
        scope = {}
        exec(source, scope)
        out[name] = scope["case"](tf, np, root, "tf")
json.dump(out, open(sys.argv[3], "w"))
'''


def _run_simdist(cases: dict, root: str, phase: str) -> dict:
    out = {}
    for name, source in cases.items():
        if name.startswith(phase):
            scope: dict = {}
            exec(source, scope)
            out[name] = json.loads(json.dumps(scope["case"](simdist, np, root, "simdist")))
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("tensorflow is not installed (pip install 'simdist[tensorflow]')")
    root = tmp_path_factory.mktemp("tfrecord_vs_tf")
    for side in ("simdist", "tf"):
        (root / side).mkdir()
    cases = {name: _PRELUDE + source for name, source in tfrecord_cases.CASES.items()}
    (root / "cases.json").write_text(json.dumps(cases))
    ours = _run_simdist(cases, str(root), "write")
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(root / "cases.json"), str(root),
         str(root / "tf.json")],
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES=""),
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    theirs = json.loads((root / "tf.json").read_text())
    ours.update(_run_simdist(cases, str(root), "read"))
    return ours, theirs, root


@pytest.mark.parametrize("name", sorted(tfrecord_cases.CASES))
def test_case_matches_tensorflow(results, name):
    ours, theirs, _ = results
    assert set(ours[name]) == set(theirs[name])
    for key in ours[name]:
        assert ours[name][key] == theirs[name][key], f"{name}/{key}"


def test_uncompressed_files_are_byte_identical(results):
    _, _, root = results
    names = sorted(p.name for p in pathlib.Path(root, "simdist").iterdir() if "plain" in p.name)
    assert names
    for name in names:
        ours = pathlib.Path(root, "simdist", name).read_bytes()
        theirs = pathlib.Path(root, "tf", name).read_bytes()
        assert ours == theirs, name


def test_error_messages_were_compared(results):
    """The cases do reach errors on both sides (a case that stopped raising would pass)."""
    ours, _, _ = results
    text = json.dumps(ours)
    assert len(re.findall(r'"error", "(\w+)"', text)) >= 20

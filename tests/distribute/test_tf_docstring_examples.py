"""TensorFlow's own tf.distribute docstring examples, run on simdist with the import swapped.

The examples are read at test time from the installed TensorFlow's source files
(``tensorflow/python/distribute/*.py``; TensorFlow itself is not imported) and run as doctests
with ``tf`` bound to simdist, each in a fresh runtime of a host with simdist's default 4
virtual GPUs. What is adapted, and why:

* NumPy 2 prints scalars as ``np.float64(3.0)``; the examples were written for NumPy 1, so
  they run under ``np.set_printoptions(legacy="1.25")`` (TF's own doctests do likewise).
* A few examples in sharded_variable.py write an expected value as a ``>>> [2, 1]`` line after
  ``>>> partitions = ...``; it is read as what it means (``partitions`` is ``[2, 1]``).
* TensorFlow does not doctest tpu_strategy.py (no TPU), so its examples leave out what
  their calls print (``initialize_tpu_system`` returns a Topology, ``strategy.run`` a
  PerReplica). Those examples are run against simdist's simulated TPU and must not raise;
  an example that shows an output is still compared with it.
* Names those examples use bare (``FixedShardsPartitioner``, ``dtypes``) are given from
  simdist's ``tf.distribute.experimental.partitioners`` and ``tf.dtypes``.

Skipped where TensorFlow is not installed; ``EXCLUDED`` lists the examples that do not run,
each with its reason.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import io
import pathlib

import numpy as np
import pytest

import simdist as tf
from simdist.distribute.sharded_variable import ShardedVariable
from simdist.testing import fresh_runtime

FILES = ("distribute_lib.py", "mirrored_strategy.py", "sharded_variable.py", "tpu_strategy.py")

EXCLUDED = {
    "sharded_variable.py:ShardedVariable": "exports a tf.Module's tf.functions with "
    "tf.saved_model.save; simdist saves Keras models only (it has no graphs to save)",
}


def _source_dir() -> pathlib.Path | None:
    spec = importlib.util.find_spec("tensorflow")
    if spec is None or spec.origin is None:
        return None
    return pathlib.Path(spec.origin).parent / "python" / "distribute"


def _docstrings() -> list[tuple[str, str]]:
    root = _source_dir()
    if root is None:
        return []
    found = []
    for name in FILES:
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name.startswith("_"):
                continue
            doc = ast.get_docstring(node, clean=True)
            if doc and ">>>" in doc:
                found.append((f"{name}:{node.name}", doc))
    return found


DOCSTRINGS = _docstrings()


def _read_literal_results(test: doctest.DocTest) -> None:
    """``>>> x = f()`` followed by ``>>> [2, 1]`` (no output): the second is x's value."""
    for previous, example in zip(test.examples, test.examples[1:], strict=False):
        if example.want or previous.want:
            continue
        try:
            value = ast.literal_eval(example.source.strip())
            target = ast.parse(previous.source).body[0]
        except (ValueError, SyntaxError):
            continue
        if isinstance(target, ast.Assign) and isinstance(target.targets[0], ast.Name):
            example.source = f"{target.targets[0].id}\n"
            example.want = f"{value!r}\n"


class _UnshownOutputChecker(doctest.OutputChecker):
    """Accepts any output where the example shows none (examples TF never ran itself)."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return not want or super().check_output(want, got, optionflags)


UNSHOWN_OUTPUTS = ("tpu_strategy.py",)


def _globals() -> dict:
    partitioners = tf.distribute.experimental.partitioners
    return {
        "tf": tf,
        "np": np,
        "FixedShardsPartitioner": partitioners.FixedShardsPartitioner,
        "MinSizePartitioner": partitioners.MinSizePartitioner,
        "MaxSizePartitioner": partitioners.MaxSizePartitioner,
        "ShardedVariable": ShardedVariable,
        "dtypes": tf.dtypes,
    }


@pytest.mark.skipif(not DOCSTRINGS, reason="TensorFlow is not installed: no source to read")
@pytest.mark.parametrize(("name", "doc"), DOCSTRINGS, ids=[n for n, _ in DOCSTRINGS])
def test_tensorflow_docstring_example_runs_on_simdist(name, doc):
    if name in EXCLUDED:
        pytest.skip(EXCLUDED[name])
    test = doctest.DocTestParser().get_doctest(doc, _globals(), name, name.split(":")[0], 0)
    _read_literal_results(test)
    checker = _UnshownOutputChecker() if name.split(":")[0] in UNSHOWN_OUTPUTS else None
    runner = doctest.DocTestRunner(
        checker=checker, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    out = io.StringIO()
    printing = np.get_printoptions()
    np.set_printoptions(legacy="1.25")
    try:
        with fresh_runtime():
            result = runner.run(test, out=out.write, clear_globs=True)
    finally:
        np.set_printoptions(**printing)
        tf.distribute.experimental_set_strategy(None)
    assert result.attempted > 0
    assert result.failed == 0, out.getvalue()


def test_the_examples_are_found():
    if _source_dir() is None:
        pytest.skip("TensorFlow is not installed")
    assert len(DOCSTRINGS) >= 15

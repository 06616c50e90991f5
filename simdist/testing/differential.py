"""The differential harness: the same snippet on simdist and on real TensorFlow, compared.

A :class:`Snippet` is Python source that uses ``tf`` and calls ``observe(label, value)`` for
everything it wants compared (``observe(label, lambda: ...)`` calls it and observes what it
returns or raises); ``mirrored(devices)`` gives a MirroredStrategy (on TF one object per
device list and process, see :func:`_execute`). :func:`run_simdist` runs snippets here,
each in a fresh runtime (:func:`~simdist.testing.runtime.fresh_runtime`) on a host with :data:`CPUS`
logical CPUs and no GPU; :func:`run_tensorflow` runs them in **one** TensorFlow subprocess
(tf_keras, ``TF_USE_LEGACY_KERAS=1``), configured the same way with
``tf.config.set_logical_device_configuration``, which TF allows once per process. Each
observation is turned into a plain description (:func:`describe`) of every observable:
the type's name, values, dtypes, shapes, enum reprs, device names; and for an exception
(one raised by ``observe``'s callable or by the snippet itself) its class, its classes'
names (the MRO) and its message. :func:`compare` holds the two descriptions together:

* type names, dtypes, shapes, strings, enum reprs and integers exactly; floats to a relative
  1e-6 (NaN equal to NaN);
* an error: TF's class must be one of simdist's error's classes (``except TypeError`` works
  the same), and each of the snippet's ``phrases`` must be in both messages;
* a deliberate difference is listed once in :data:`TYPE_NAMES` (a class that has another
  name in TF) or in the snippet's ``differs`` (label -> reason, documented in
  docs/differences.md), and :func:`compare` then requires that the two sides *do* differ
  there, so a record that is no longer needed fails too. Nothing is loosened silently.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import math
import os
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "CPUS",
    "TYPE_NAMES",
    "Snippet",
    "describe",
    "compare",
    "run_simdist",
    "run_tensorflow",
    "tensorflow_available",
]

CPUS = 4
"""Logical CPUs on both sides (TF: split from its physical CPU; simdist: the same call)."""

TYPE_NAMES = {
    "EagerTensor": (
        "Tensor",
        "TF's eager tensors are of a subclass EagerTensor of tf.Tensor (graph tensors are the "
        "other); simdist has no graphs, so its one tensor class is tf.Tensor itself",
    ),
    "VariableAggregation": (
        "VariableAggregationV2",
        "TF has two aggregation enums: tf.VariableAggregation is VariableAggregationV2, but a "
        "variable created without `aggregation=` reports the older VariableAggregation.NONE; "
        "simdist has the one enum tf.VariableAggregation (equal values, one class)",
    ),
}
"""TF's class name -> (simdist's, why): the classes that are named otherwise, on purpose
(for an enum, its repr's class name too)."""


@dataclasses.dataclass(frozen=True)
class Snippet:
    """One program run on both sides.

    Attributes:
        id: a unique name (``"strategy.reduce.sum_axis_none"``).
        code: Python source using ``tf`` and ``observe(label, value_or_callable)``; a
            callable is called and what it raises is observed.
        phrases: label -> phrases each side's error message must contain.
        differs: label -> why simdist deliberately differs there (docs/differences.md).
    """

    id: str
    code: str
    phrases: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    differs: dict[str, str] = dataclasses.field(default_factory=dict)


# --------------------------------------------------------------------------- describing


def _is_tensor_like(value: Any) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "shape") and hasattr(value, "numpy")


def _plain(value: Any) -> Any:
    """A NumPy array or scalar as JSON (NaN and infinities as strings)."""
    import numpy as np

    array = np.asarray(value)
    if array.dtype.kind in "fc":
        flat = [float(x) for x in array.real.ravel()]
        return [x if math.isfinite(x) else repr(x) for x in flat]
    if array.dtype.kind in "SUO":
        return [x.decode() if isinstance(x, bytes) else str(x) for x in array.ravel()]
    return [int(x) if array.dtype.kind != "b" else bool(x) for x in array.ravel()]


def describe(value: Any, depth: int = 0) -> Any:
    """A JSON-able description of ``value``'s observables (see the module docstring)."""
    if depth > 8:
        return {"type": type(value).__name__, "repr": "<too deep>"}
    kind = type(value).__name__
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"type": kind, "int": value}
    if isinstance(value, float):
        return {"type": kind, "float": value if math.isfinite(value) else repr(value)}
    if isinstance(value, enum.Enum):
        return {"type": kind, "enum": repr(value)}
    if isinstance(value, BaseException):
        return {
            "error": kind,
            "classes": [c.__name__ for c in type(value).__mro__],
            "message": str(value),
        }
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return {"type": kind, "items": [describe(v, depth + 1) for v in value]}
    if isinstance(value, tuple):  # a named tuple: fields by name
        return {
            "type": kind,
            "fields": {k: describe(v, depth + 1) for k, v in value._asdict().items()},
        }
    if isinstance(value, dict):
        return {"type": kind, "dict": {str(k): describe(v, depth + 1) for k, v in value.items()}}
    components = getattr(value, "values", None)
    distributed = isinstance(components, tuple)  # PerReplica, Mirrored, distributed variables
    variable = kind.endswith("Variable")
    if distributed or variable or _is_tensor_like(value):
        out: dict[str, Any] = {"type": kind}
        if distributed:
            out["values"] = [describe(v, depth + 1) for v in components]
        if variable or (_is_tensor_like(value) and not distributed):
            out["dtype"] = getattr(value.dtype, "name", str(value.dtype))
            out["shape"] = None if value.shape.rank is None else list(value.shape)
        if _is_tensor_like(value) and not distributed:
            out["numpy"] = _plain(value.numpy())
        if variable:
            for attr in ("name", "trainable", "synchronization", "aggregation"):
                out[attr] = describe(getattr(value, attr), depth + 1)
        return out
    if hasattr(value, "__array__") and hasattr(value, "dtype"):
        return {"type": kind, "dtype": str(value.dtype), "numpy": _plain(value)}
    return {"type": kind, "repr": repr(value)}


# --------------------------------------------------------------------------- comparing


def _same_float(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))


def _diff(ours: Any, theirs: Any, path: str, phrases: tuple[str, ...]) -> list[str]:
    """Where ``ours`` (simdist) and ``theirs`` (TF) differ: ``path: what`` lines."""
    if isinstance(theirs, dict) and "error" in theirs:
        if not isinstance(ours, dict) or "error" not in ours:
            return [
                f"{path}: TF raised {theirs['error']}: {theirs['message'][:200]}; simdist "
                f"gave {json.dumps(ours)[:200]}"
            ]
        problems = []
        if theirs["error"] not in ours["classes"]:
            problems.append(
                f"{path}: TF raised {theirs['error']}, simdist {ours['error']} "
                f"(classes {ours['classes']})"
            )
        for phrase in phrases:
            for side, d in (("simdist", ours), ("TF", theirs)):
                if phrase.lower() not in d["message"].lower():
                    problems.append(
                        f"{path}: {side}'s message lacks {phrase!r}: {d['message'][:300]}"
                    )
        return problems
    if isinstance(ours, dict) and "error" in ours:
        return [
            f"{path}: simdist raised {ours['error']}: {ours['message'][:200]}; TF gave "
            f"{json.dumps(theirs)[:200]}"
        ]
    if isinstance(theirs, dict) and isinstance(ours, dict):
        problems = []
        if "type" in theirs:
            expected = TYPE_NAMES.get(theirs["type"], (theirs["type"],))[0]
            if ours.get("type") != expected:
                problems.append(f"{path}: type {ours.get('type')} here, {theirs['type']} in TF")
        for key in sorted(set(ours) | set(theirs)):
            if key == "type":
                continue
            if key == "enum" and key in ours and key in theirs:
                name = theirs["enum"][1:].split(".", 1)[0]
                expected = theirs["enum"].replace(name, TYPE_NAMES.get(name, (name,))[0], 1)
                if ours["enum"] != expected:
                    problems.append(f"{path}: {ours['enum']} here, {theirs['enum']} in TF")
                continue
            if key not in ours or key not in theirs:
                problems.append(f"{path}.{key}: only {'TF' if key in theirs else 'simdist'} has it")
                continue
            if key in ("float", "numpy") and _floats(theirs[key]):
                a, b = ours[key], theirs[key]
                a_list, b_list = (
                    (a if isinstance(a, list) else [a]),
                    (b if isinstance(b, list) else [b]),
                )
                if len(a_list) != len(b_list) or not all(
                    _same_float(x, y) for x, y in zip(a_list, b_list, strict=True)
                ):
                    problems.append(f"{path}.{key}: {a} here, {b} in TF")
                continue
            problems += _diff(ours[key], theirs[key], f"{path}.{key}", phrases)
        return problems
    if isinstance(theirs, list) and isinstance(ours, list):
        if len(ours) != len(theirs):
            return [
                f"{path}: {len(ours)} items here, {len(theirs)} in TF: {ours} vs {theirs}"[:400]
            ]
        return [
            p
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            for p in _diff(a, b, f"{path}[{i}]", phrases)
        ]
    return [] if ours == theirs else [f"{path}: {ours!r} here, {theirs!r} in TF"]


def _floats(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return any(isinstance(x, float) or x in ("nan", "inf", "-inf") for x in items)


def compare(snippet: Snippet, ours: dict, theirs: dict) -> list[str]:
    """Every difference between the two runs' observations that is not a recorded one, and
    every recorded difference that did not occur. Empty: the snippet agrees."""
    problems = []
    for side, observed in (("simdist", ours), ("TF", theirs)):
        if "raised" in observed and "raised" not in snippet.differs:
            problems.append(
                f"{snippet.id}: the snippet itself raised on {side}:\n"
                f"{observed['raised'].get('traceback', observed['raised'])}"
            )
    for label in sorted(set(ours) | set(theirs)):
        if label == "raised":
            continue
        if label not in ours or label not in theirs:
            problems.append(
                f"{snippet.id}/{label}: observed only on {'TF' if label in theirs else 'simdist'}"
            )
            continue
        found = _diff(
            ours[label], theirs[label], f"{snippet.id}/{label}", snippet.phrases.get(label, ())
        )
        if label in snippet.differs:
            if not found:
                problems.append(
                    f"{snippet.id}/{label}: recorded as a deliberate difference "
                    f"({snippet.differs[label]}) but both sides agree: remove the record"
                )
        else:
            problems += found
    for label in snippet.differs:
        if label not in ours and label not in theirs:
            problems.append(f"{snippet.id}/{label}: a recorded difference that is never observed")
    return problems


# --------------------------------------------------------------------------- running


def _configure_devices(tf: Any) -> None:
    cpu = tf.config.list_physical_devices("CPU")[0]
    if hasattr(tf.config, "set_virtual_devices"):  # simdist: a host without GPUs, as TF's here
        tf.config.set_virtual_devices(gpus=0, tpus=0)
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(CPUS)]
    )


def _execute(tf: Any, snippet_id: str, code: str, strategies: dict | None = None) -> dict:
    """Run one snippet; ``strategies`` caches ``mirrored(devices)`` across snippets (TF)."""
    observed: dict[str, Any] = {}

    def mirrored(devices: Sequence[str] = ("CPU:0", "CPU:1"), **kwargs: Any) -> Any:
        """A MirroredStrategy over ``devices``. On TF, one object per device list for the
        whole process: TF's MirroredStrategy objects over the same devices share collective
        group and instance keys, so a second object's collectives collide with the first's
        and abort the process's collective executor (TF 2.21, logical CPUs)."""
        if strategies is None or kwargs:
            return tf.distribute.MirroredStrategy(list(devices), **kwargs)
        key = tuple(devices)
        if key not in strategies:
            strategies[key] = tf.distribute.MirroredStrategy(list(devices))
        return strategies[key]

    def observe(label: str, value: Any) -> None:
        if label in observed:
            raise ValueError(f"snippet {snippet_id}: label {label!r} observed twice")
        if inspect.isfunction(value):  # observe(label, lambda: ...): call it, catch its error
            try:
                value = value()
            except Exception as exc:  # noqa: BLE001 - the error is the observation
                value = exc
        observed[label] = describe(value)

    try:
        exec(
            compile(textwrap.dedent(code), f"<snippet {snippet_id}>", "exec"),
            {"tf": tf, "observe": observe, "mirrored": mirrored, "__name__": "__snippet__"},
        )
    except Exception as exc:  # noqa: BLE001 - an uncaught error is observed as "raised"
        observed["raised"] = describe(exc)
        observed["raised"]["traceback"] = traceback.format_exc(limit=-3)
    return observed


def run_simdist(snippets: Sequence[Snippet]) -> dict[str, dict]:
    """Each snippet's observations on simdist, each in a fresh runtime with :data:`CPUS`
    logical CPUs and no GPU."""
    import simdist as tf
    from simdist.keras import backend
    from simdist.testing.runtime import fresh_runtime

    results = {}
    for snippet in snippets:
        backend.clear_session()
        with fresh_runtime():
            _configure_devices(tf)
            results[snippet.id] = _execute(tf, snippet.id, snippet.code)
    return results


def tensorflow_available() -> bool:
    """Whether TensorFlow is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("tensorflow") is not None


def run_tensorflow(snippets: Sequence[Snippet], timeout: float = 600.0) -> dict[str, dict]:
    """Each snippet's observations on real TensorFlow, all in one subprocess.

    Raises:
        RuntimeError: the subprocess failed (its stderr is in the message).
    """
    payload = json.dumps([{"id": s.id, "code": s.code} for s in snippets])
    env = dict(
        os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES=""
    )
    # TF turns its oneDNN kernels on by itself only on CPUs with AVX-512 VNNI or newer, and
    # without them its CPU convolutions refuse NCHW: a snippet would pass or fail by the CPU.
    env.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    proc = subprocess.run(
        [sys.executable, "-m", "simdist.testing.differential"],
        input=payload,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"the TensorFlow subprocess failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    marker = proc.stdout.rfind("\n@@RESULTS@@\n")
    return json.loads(proc.stdout[marker + len("\n@@RESULTS@@\n") :])


def _tensorflow_main(read: Callable[[], str] = sys.stdin.read) -> None:
    import tensorflow as tf

    _configure_devices(tf)
    snippets = json.loads(read())
    results = {}
    strategies: dict = {}
    for snippet in snippets:
        tf.keras.backend.clear_session()
        results[snippet["id"]] = _execute(tf, snippet["id"], snippet["code"], strategies)
    sys.stdout.write("\n@@RESULTS@@\n" + json.dumps(results))


if __name__ == "__main__":
    _tensorflow_main()

"""Seeded random ops (``tf.random``): TF's global/op seed rules, made fully deterministic.

TF's rules, as simdist follows them:

* ``set_seed(g)`` sets the global seed and restarts every sequence: after it, the same
  program draws the same values again.
* An op given ``seed=s`` draws from the pair ``(g, s)``. Calling it again with the same
  seeds gives *different* values (TF eager keeps one stateful kernel per seed pair); simdist
  keeps a call counter per ``(g, s)`` pair, and ``set_seed`` resets those counters.
* An op without a seed takes its op seed from a counter that ``set_seed`` resets, so a
  sequence of unseeded ops after ``set_seed(g)`` is reproducible.
* Where TF would be nondeterministic (no global seed was ever set, or ``set_seed(None)``),
  simdist uses global seed 0: every program is reproducible, and its values differ from
  those after an explicit ``set_seed``.

Each draw uses its own NumPy ``Philox`` generator keyed by ``(global, op, call)``, never
NumPy's global state. The counters live in a :class:`RandomState`: the thread's
``context.state.random_state`` when set (the replica runner gives each replica its own),
else one module-level default. The numbers are simdist's own: they do not equal TF's.
``stateless_*`` ops are pure functions of their ``seed=[a, b]``.
"""

from __future__ import annotations

import numbers

import numpy as np

from simdist import errors
from simdist.core import dtypes, step_hooks
from simdist.core.context import mark_runtime_started, state
from simdist.core.convert import convert_to_tensor
from simdist.core.shape import TensorShape
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "RandomState",
    "set_seed",
    "draw",
    "uniform",
    "normal",
    "truncated_normal",
    "shuffle",
    "categorical",
    "stateless_uniform",
    "stateless_normal",
    "stateless_truncated_normal",
]

DEFAULT_GLOBAL_SEED = 0  # simdist's choice where TF would be nondeterministic
_MASK64 = (1 << 64) - 1
_STATEFUL, _STATELESS = 0, 1  # domain tags: a stateless seed never replays a stateful stream


class RandomState:
    """The counters behind TF's seed rules: the global seed, unseeded-op counter, call counts.

    One per independent random stream (the process default, or one per replica).
    """

    def __init__(self, global_seed: int | None = None, stream: int = 0) -> None:
        self.global_seed = global_seed
        self.stream = stream  # 0: the host; replica r of a strategy draws from stream r + 1
        self.resets = 0  # how many times set_seed ran: replica streams restart with the host
        self.op_counter = 0  # op seeds handed to ops created without seed=
        self.calls: dict[tuple[int, int], int] = {}  # (global, op) -> draws so far

    def set_seed(self, seed: int | None) -> None:
        """Set the global seed (``None`` clears it) and restart every sequence."""
        self.global_seed = seed
        self.op_counter = 0
        self.calls.clear()
        self.resets += 1

    def get_state(self) -> dict:
        """The counters as JSON-able data (BackupAndRestore saves them with the weights)."""
        return {
            "global_seed": self.global_seed,
            "op_counter": self.op_counter,
            "calls": [[g, op, n] for (g, op), n in sorted(self.calls.items())],
        }

    def set_state(self, saved: dict) -> None:
        """Restore counters saved by :meth:`get_state` (without restarting replica streams)."""
        self.global_seed = saved["global_seed"]
        self.op_counter = int(saved["op_counter"])
        self.calls = {(int(g), int(op)): int(n) for g, op, n in saved["calls"]}

    def next_key(self, op_seed: int | None) -> tuple[int, int, int]:
        """The ``(global, op, call)`` triple of the next draw, advancing the counters."""
        global_seed = DEFAULT_GLOBAL_SEED if self.global_seed is None else self.global_seed
        if op_seed is None:
            op_seed = self.op_counter
            self.op_counter += 1
        pair = (global_seed, op_seed)
        call = self.calls.get(pair, 0)
        self.calls[pair] = call + 1
        return global_seed, op_seed, call


_default_state = RandomState()


def _current_state() -> RandomState:
    per_thread = getattr(state, "random_state", None)
    return _default_state if per_thread is None else per_thread


def _generator(*words: int) -> np.random.Generator:
    seq = np.random.SeedSequence([w & _MASK64 for w in words])
    return np.random.Generator(np.random.Philox(seq))


def _check_seed(seed, what: str = "seed") -> int | None:
    if seed is None:
        return None
    if isinstance(seed, Tensor):
        seed = seed.numpy()
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{what} must be an integer or None, got {seed!r}.")
    return int(seed)


def set_seed(seed: int | None) -> None:
    """Set the global random seed (``tf.random.set_seed``) and restart all sequences.

    Args:
        seed: an integer, or ``None`` to go back to simdist's default global seed (0).

    Raises:
        TypeError: ``seed`` is not an integer.
    """
    _current_state().set_seed(_check_seed(seed))


def draw(seed: int | None = None) -> np.random.Generator:
    """A NumPy generator for one random op, following TF's seed rules (for other modules).

    Dropout and Keras initializers call this once per op call, with the op's ``seed``.

    Args:
        seed: the op seed, or ``None`` to take the next one from the counter.

    Returns:
        A fresh ``np.random.Generator`` keyed by ``(global seed, op seed, call count)``.
    """
    mark_runtime_started()
    step_hooks.note("random", seed=seed, stateless=False)
    current = _current_state()
    g, op, call = current.next_key(_check_seed(seed))
    if current.stream:
        return _generator(_STATEFUL, g, op, call, current.stream)
    return _generator(_STATEFUL, g, op, call)


# --- argument checks --------------------------------------------------------------------
def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, TensorShape):
        dims = shape.as_list()
    elif isinstance(shape, (Tensor, np.ndarray, numbers.Integral)):
        arr = np.asarray(shape.numpy() if isinstance(shape, Tensor) else shape)
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise errors.InvalidArgumentError(
                f"shape must be a vector of {{int32,int64}}, got shape {list(arr.shape)}; "
                "pass a list such as [3]."
            )
        dims = arr.tolist()
    else:
        dims = [int(d) if d is not None else None for d in shape]
    for d in dims:
        if d is None or d < 0:
            raise errors.InvalidArgumentError(
                f"Dimension {d} must be >= 0; a random op needs a fully known shape, got {dims}."
            )
    return tuple(int(d) for d in dims)


def _float_dtype(dtype, op: str) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(
            f"{op} draws floating-point values; dtype {dtype.name} is not one. Use a float "
            "dtype (float16, float32, float64) and tf.cast the result if needed."
        )
    return dtype


def _param(value, dtype: dtypes.DType) -> np.ndarray:
    """A parameter (minval, mean...) as an array of ``dtype``, as TF converts it."""
    return convert_to_tensor(value, dtype=dtype)._value


def _unit_floats(rng: np.random.Generator, shape, dtype: dtypes.DType) -> np.ndarray:
    """Uniform [0, 1) in ``dtype`` (float16 drawn in float32 and rounded down into range)."""
    if dtype == dtypes.float64:
        return rng.random(shape, dtype=np.float64)
    u = rng.random(shape, dtype=np.float32)
    if dtype == dtypes.float32:
        return u
    out = u.astype(dtype.as_numpy_dtype)
    one_below = np.nextafter(dtype.as_numpy_dtype(1), dtype.as_numpy_dtype(0))
    return np.minimum(out, one_below)


def _std_normal(rng: np.random.Generator, shape, dtype: dtypes.DType) -> np.ndarray:
    np_dtype = np.float64 if dtype == dtypes.float64 else np.float32
    return rng.standard_normal(shape, dtype=np_dtype)


def _truncated(rng: np.random.Generator, shape, dtype: dtypes.DType) -> np.ndarray:
    """Standard normals, redrawn (in rounds, vectorised) until all lie within 2 stddev."""
    z = _std_normal(rng, shape, dtype)
    bad = np.flatnonzero(np.abs(z) > 2.0)
    flat = z.reshape(-1)
    while bad.size:
        fresh = _std_normal(rng, bad.size, dtype)
        flat[bad] = fresh
        bad = bad[np.abs(fresh) > 2.0]
    return z


# --- the sampling rules, shared by stateful and stateless ops ----------------------------
def _sample_uniform(rng, shape, minval, maxval, dtype, op: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        lo, hi = _param(minval, dtype), _param(maxval, dtype)
        if lo.ndim or hi.ndim:
            raise errors.InvalidArgumentError(
                f"{op}: minval and maxval must be scalars for integer dtypes, got shapes "
                f"{list(lo.shape)} and {list(hi.shape)}."
            )
        if lo >= hi:
            raise errors.InvalidArgumentError(f"Need minval < maxval, got {lo} >= {hi}")
        return make_tensor(rng.integers(lo, hi, size=shape, dtype=dtype.as_numpy_dtype), dtype)
    dtype = _float_dtype(dtype, op)
    lo, hi = _param(minval, dtype), _param(1 if maxval is None else maxval, dtype)
    u = _unit_floats(rng, shape, dtype)
    return make_tensor((lo + (hi - lo) * u).astype(dtype.as_numpy_dtype, copy=False), dtype)


def _sample_normal(z: np.ndarray, mean, stddev, dtype: dtypes.DType) -> Tensor:
    m, s = _param(mean, dtype), _param(stddev, dtype)
    out = (m + s * z.astype(dtype.as_numpy_dtype, copy=False)).astype(dtype.as_numpy_dtype)
    return make_tensor(out, dtype)


# --- stateful ops -------------------------------------------------------------------------
def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Values drawn uniformly from ``[minval, maxval)`` (``tf.random.uniform``).

    Args:
        shape: the output shape (list, tuple, TensorShape or 1-D integer tensor).
        minval: lower bound (included).
        maxval: upper bound (excluded); defaults to 1 for floats, required for integers.
        dtype: a float or integer dtype.
        seed: the op seed (see the module docstring for the seed rules).

    Returns:
        A tensor of ``shape`` and ``dtype``.

    Raises:
        ValueError: an integer dtype without ``maxval``.
        InvalidArgumentError: integer ``minval >= maxval``, or a negative dimension.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer and maxval is None:
        raise ValueError(f"Must specify maxval for integer dtype tf.{dtype.name}")
    shape = _shape(shape)
    return _sample_uniform(draw(seed), shape, minval, maxval, dtype, "RandomUniform")


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Values from a normal distribution (``tf.random.normal``).

    Args:
        shape: the output shape.
        mean: the mean.
        stddev: the standard deviation.
        dtype: a float dtype.
        seed: the op seed.

    Raises:
        TypeError: a non-float dtype.
    """
    dtype = _float_dtype(dtype, "tf.random.normal")
    shape = _shape(shape)
    return _sample_normal(_std_normal(draw(seed), shape, dtype), mean, stddev, dtype)


def truncated_normal(
    shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None
) -> Tensor:
    """Normal values redrawn beyond 2 stddev from the mean (``tf.random.truncated_normal``).

    Args:
        shape: the output shape.
        mean: the mean of the (untruncated) normal.
        stddev: its standard deviation.
        dtype: a float dtype.
        seed: the op seed.

    Raises:
        TypeError: a non-float dtype.
    """
    dtype = _float_dtype(dtype, "tf.random.truncated_normal")
    shape = _shape(shape)
    return _sample_normal(_truncated(draw(seed), shape, dtype), mean, stddev, dtype)


def shuffle(value, seed=None, name=None) -> Tensor:
    """A random permutation of ``value`` along its first axis (``tf.random.shuffle``).

    A scalar comes back unchanged. The result is not differentiable (as in TF).
    """
    x = convert_to_tensor(value)
    if x._value.ndim == 0:
        return x
    perm = draw(seed).permutation(x._value.shape[0])
    return make_tensor(x._value[perm], x.dtype)


def categorical(logits, num_samples: int, dtype=None, seed=None, name=None) -> Tensor:
    """Class indices drawn from the unnormalised log-probabilities ``logits`` [batch, classes].

    Args:
        logits: a 2-D float tensor ``[batch_size, num_classes]``.
        num_samples: samples per row.
        dtype: int32 or int64 (default int64, as TF).
        seed: the op seed.

    Returns:
        An integer tensor ``[batch_size, num_samples]``.

    Raises:
        InvalidArgumentError: logits are not 2-D.
    """
    x = convert_to_tensor(logits)
    dtype = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    lv = x._value
    if lv.ndim != 2:
        raise errors.InvalidArgumentError(
            f"logits should be a matrix [batch_size, num_classes], got shape {list(lv.shape)}."
        )
    n = int(num_samples)
    gumbel = draw(seed).gumbel(size=(lv.shape[0], n, lv.shape[1]))
    picks = np.argmax(lv[:, None, :].astype(np.float64) + gumbel, axis=-1)
    return make_tensor(picks.astype(dtype.as_numpy_dtype), dtype)


# --- stateless ops: pure functions of seed=[a, b] ------------------------------------------
def _stateless_rng(seed) -> np.random.Generator:
    s = np.asarray(seed.numpy() if isinstance(seed, Tensor) else seed)
    if s.shape != (2,):
        raise errors.InvalidArgumentError(
            f"seed must have shape [2], not {list(s.shape)}; pass two integers, e.g. seed=[1, 2]."
        )
    if s.dtype.kind not in "iu":
        raise TypeError(f"seed must hold integers, got dtype {s.dtype}.")
    step_hooks.note("random", seed=(int(s[0]), int(s[1])), stateless=True)
    return _generator(_STATELESS, int(s[0]), int(s[1]))


def stateless_uniform(
    shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None, alg="auto_select"
) -> Tensor:
    """Uniform values that depend only on ``seed`` (``tf.random.stateless_uniform``).

    For integer dtypes pass both ``minval`` and ``maxval``, or both ``None`` for the full
    range of the dtype.

    Raises:
        InvalidArgumentError: ``seed`` is not of shape [2].
        ValueError: an integer dtype with only one of ``minval``/``maxval``.
    """
    dtype = dtypes.as_dtype(dtype)
    shape = _shape(shape)
    rng = _stateless_rng(seed)
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(
                f"For integer dtype {dtype.name}, minval and maxval must be both None or "
                f"both set; got minval={minval} and maxval={maxval}."
            )
        if minval is None:
            info = np.iinfo(dtype.as_numpy_dtype)
            full = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=info.dtype)
            return make_tensor(full, dtype)
    return _sample_uniform(rng, shape, minval, maxval, dtype, "StatelessRandomUniform")


def stateless_normal(
    shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"
) -> Tensor:
    """Normal values that depend only on ``seed`` (``tf.random.stateless_normal``)."""
    dtype = _float_dtype(dtype, "tf.random.stateless_normal")
    shape = _shape(shape)
    z = _std_normal(_stateless_rng(seed), shape, dtype)
    return _sample_normal(z, mean, stddev, dtype)


def stateless_truncated_normal(
    shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"
) -> Tensor:
    """Truncated-normal values that depend only on ``seed``."""
    dtype = _float_dtype(dtype, "tf.random.stateless_truncated_normal")
    shape = _shape(shape)
    z = _truncated(_stateless_rng(seed), shape, dtype)
    return _sample_normal(z, mean, stddev, dtype)

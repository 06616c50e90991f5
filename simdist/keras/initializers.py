"""``tf.keras.initializers``: the starting values of layer weights.

Randomness comes from ``simdist.core.random`` and follows Keras 2's rule: an initializer
built with ``seed=`` draws from a stateless generator keyed by ``(seed, 0)``, so every call
returns the same values; an unseeded one draws from the stateful ops, which follow TF's
global-seed rules (``tf.random.set_seed``). Fans follow Keras: for a kernel of shape
``(..., in, out)`` the receptive field (the product of the leading dimensions) multiplies
both ``in`` and ``out``.
"""

from __future__ import annotations

import math

import numpy as np

from simdist.core import dtypes
from simdist.core import random as core_random
from simdist.core.convert import constant
from simdist.core.tensor import Tensor
from simdist.keras import backend

__all__ = [
    "Initializer",
    "Zeros",
    "Ones",
    "Constant",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "Orthogonal",
    "Identity",
    "GlorotUniform",
    "GlorotNormal",
    "HeNormal",
    "HeUniform",
    "LecunNormal",
    "LecunUniform",
    "Orthogonal",
    "get",
    "serialize",
    "deserialize",
]

# stddev of a unit normal truncated to [-2, 2]: VarianceScaling divides by it.
_TRUNCATED_STDDEV = 0.87962566103423978


def _dtype(dtype, floating: bool = True) -> dtypes.DType:
    out = dtypes.as_dtype(dtype or backend.floatx())
    if floating and not out.is_floating:
        raise ValueError(f"Expected a floating dtype for a random initializer, got {out.name}.")
    return out


def _shape(shape) -> tuple[int, ...]:
    return tuple(int(d) for d in shape)


class Initializer:
    """Base class: ``init(shape, dtype=None) -> Tensor``."""

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__.")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        return cls(**config)


class Zeros(Initializer):
    """All zeros (any dtype)."""

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        return constant(0, dtype=_dtype(dtype, floating=False), shape=_shape(shape))


class Ones(Initializer):
    """All ones (any dtype)."""

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        return constant(1, dtype=_dtype(dtype, floating=False), shape=_shape(shape))


class Constant(Initializer):
    """Every element ``value`` (a scalar, or an array of the requested shape's size)."""

    def __init__(self, value=0) -> None:
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        return constant(self.value, dtype=_dtype(dtype, floating=False), shape=_shape(shape))

    def get_config(self) -> dict:
        return {"value": self.value}


class _Random(Initializer):
    """Holds ``seed`` and draws stateless (seeded) or stateful (unseeded) values."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def _uniform(self, shape, minval, maxval, dtype) -> Tensor:
        if self.seed is None:
            return core_random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype)
        return core_random.stateless_uniform(
            shape, seed=(self.seed, 0), minval=minval, maxval=maxval, dtype=dtype
        )

    def _normal(self, shape, mean, stddev, dtype) -> Tensor:
        if self.seed is None:
            return core_random.normal(shape, mean=mean, stddev=stddev, dtype=dtype)
        return core_random.stateless_normal(
            shape, seed=(self.seed, 0), mean=mean, stddev=stddev, dtype=dtype
        )

    def _truncated_normal(self, shape, mean, stddev, dtype) -> Tensor:
        if self.seed is None:
            return core_random.truncated_normal(shape, mean=mean, stddev=stddev, dtype=dtype)
        return core_random.stateless_truncated_normal(
            shape, seed=(self.seed, 0), mean=mean, stddev=stddev, dtype=dtype
        )

    def get_config(self) -> dict:
        return {"seed": self.seed}


class RandomUniform(_Random):
    """Uniform on ``[minval, maxval)``."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None) -> None:
        super().__init__(seed)
        self.minval = minval
        self.maxval = maxval

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        return self._uniform(_shape(shape), self.minval, self.maxval, _dtype(dtype))

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(_Random):
    """Normal with ``mean`` and ``stddev``."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None) -> None:
        super().__init__(seed)
        self.mean = mean
        self.stddev = stddev

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        return self._normal(_shape(shape), self.mean, self.stddev, _dtype(dtype))

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """Normal with ``mean`` and ``stddev``, redrawn beyond two standard deviations."""

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        return self._truncated_normal(_shape(shape), self.mean, self.stddev, _dtype(dtype))


def compute_fans(shape) -> tuple[float, float]:
    """``(fan_in, fan_out)`` of a weight of ``shape``, as Keras computes them."""
    shape = _shape(shape)
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    receptive = math.prod(shape[:-2]) if len(shape) > 2 else 1
    return float(shape[-2] * receptive), float(shape[-1] * receptive)


class VarianceScaling(_Random):
    """Scale the draw's variance to ``scale / n``, n being fan_in, fan_out or their mean.

    Raises:
        ValueError: ``scale <= 0``, or an unknown ``mode`` or ``distribution``.
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        super().__init__(seed)
        if scale <= 0.0:
            raise ValueError(f"`scale` must be positive; received scale={scale}.")
        mode = str(mode).lower()
        distribution = str(distribution).lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if mode not in self._MODES:
            raise ValueError(f"Invalid `mode` {mode!r}; use one of {self._MODES}.")
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(
                f"Invalid `distribution` {distribution!r}; use one of {self._DISTRIBUTIONS}."
            )
        self.scale = scale
        self.mode = mode
        self.distribution = distribution

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        shape = _shape(shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(variance) / _TRUNCATED_STDDEV
            return self._truncated_normal(shape, 0.0, stddev, dtype)
        if self.distribution == "untruncated_normal":
            return self._normal(shape, 0.0, math.sqrt(variance), dtype)
        limit = math.sqrt(3.0 * variance)
        return self._uniform(shape, -limit, limit, dtype)

    def get_config(self) -> dict:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
        }


def _preset(name: str, scale: float, mode: str, distribution: str, doc: str) -> type:
    def __init__(self, seed=None) -> None:
        VarianceScaling.__init__(self, scale, mode, distribution, seed)

    def get_config(self) -> dict:
        return {"seed": self.seed}

    return type(
        name,
        (VarianceScaling,),
        {"__init__": __init__, "get_config": get_config, "__doc__": doc, "__module__": __name__},
    )


GlorotUniform = _preset(
    "GlorotUniform",
    1.0,
    "fan_avg",
    "uniform",
    "Uniform on [-limit, limit], limit = sqrt(6 / (fan_in + fan_out)): Keras's default kernel.",
)
GlorotNormal = _preset(
    "GlorotNormal",
    1.0,
    "fan_avg",
    "truncated_normal",
    "Truncated normal, stddev = sqrt(2 / (fan_in + fan_out)).",
)
HeNormal = _preset(
    "HeNormal", 2.0, "fan_in", "truncated_normal", "Truncated normal, stddev = sqrt(2 / fan_in)."
)
HeUniform = _preset("HeUniform", 2.0, "fan_in", "uniform", "Uniform, limit = sqrt(6 / fan_in).")
LecunNormal = _preset(
    "LecunNormal", 1.0, "fan_in", "truncated_normal", "Truncated normal, stddev = sqrt(1 / fan_in)."
)
LecunUniform = _preset(
    "LecunUniform", 1.0, "fan_in", "uniform", "Uniform, limit = sqrt(3 / fan_in)."
)


class Orthogonal(_Random):
    """A (semi-)orthogonal matrix times ``gain``: the Q of a QR decomposition of a normal
    ``(max(rows, cols), min(rows, cols))`` matrix, signs fixed by R's diagonal, rows being the
    product of all but the last dimension.

    Raises:
        ValueError: a shape of fewer than two dimensions.
    """

    def __init__(self, gain=1.0, seed=None) -> None:
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        shape = _shape(shape)
        if len(shape) < 2:
            raise ValueError(
                "The tensor to initialize must be at least two-dimensional. Received: "
                f"shape={shape} of rank {len(shape)}."
            )
        dtype = _dtype(dtype)
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        flat = (max(rows, cols), min(rows, cols))
        a = np.asarray(self._normal(flat, 0.0, 1.0, dtype)._value, np.float64)
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        values = (self.gain * q).reshape(shape).astype(dtype.as_numpy_dtype)
        return constant(values, dtype=dtype)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    """``gain`` times the identity matrix (rectangular shapes: ones on the main diagonal).

    Raises:
        ValueError: a shape that is not two-dimensional.
    """

    def __init__(self, gain=1.0) -> None:
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs) -> Tensor:
        shape = _shape(shape)
        if len(shape) != 2:
            raise ValueError(
                "Identity matrix initializer can only be used for 2D matrices. Received: "
                f"shape={shape} of rank {len(shape)}."
            )
        dtype = _dtype(dtype)
        values = (self.gain * np.eye(*shape)).astype(dtype.as_numpy_dtype)
        return constant(values, dtype=dtype)

    def get_config(self) -> dict:
        return {"gain": self.gain}


_CLASSES = {
    cls.__name__: cls
    for cls in (
        Zeros,
        Ones,
        Constant,
        RandomNormal,
        RandomUniform,
        TruncatedNormal,
        VarianceScaling,
        GlorotUniform,
        GlorotNormal,
        HeNormal,
        HeUniform,
        LecunNormal,
        LecunUniform,
        Orthogonal,
        Identity,
    )
}
_ALIASES = {backend.to_snake_case(name): cls for name, cls in _CLASSES.items()}
_ALIASES.update({"zero": Zeros, "one": Ones})


def serialize(initializer: Initializer) -> dict:
    """``{'class_name': ..., 'config': ...}`` for ``deserialize``."""
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config: dict) -> Initializer:
    """Rebuild an initializer from :func:`serialize`'s output.

    Raises:
        ValueError: an unknown class name.
    """
    cls = _CLASSES.get(config.get("class_name")) or _ALIASES.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown initializer: {config.get('class_name')!r}.")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """An initializer from a name (``'glorot_uniform'``, ``'GlorotUniform'``), a config
    dict, an initializer or a callable; ``None`` gives ``None``.

    Raises:
        ValueError: the identifier names no initializer.
    """
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _CLASSES.get(identifier) or _ALIASES.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret initializer identifier: {identifier!r}; use one of "
                f"{sorted(_ALIASES)}."
            )
        return cls()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}.")

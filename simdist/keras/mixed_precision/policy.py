"""``tf.keras.mixed_precision.Policy`` and the global policy that new layers follow.

A policy names two dtypes (Keras 2's rule): the *compute* dtype a layer computes in (its
inputs are cast to it, its weights read as it inside its call) and the *variable* dtype its
weights are kept in. ``"mixed_float16"`` is float16 / float32; any dtype name (``"float32"``,
``"float64"``) is that dtype for both. A layer takes the global policy when it is built
with ``dtype=None`` (:func:`set_global_policy`; by default ``Policy(floatx())``), or the
policy its ``dtype=`` names.

``"mixed_bfloat16"`` (and ``"bfloat16"``) are refused: NumPy has no bfloat16, and simdist
depends on NumPy alone (``ml_dtypes`` would be needed to round honestly to bfloat16).
"""

from __future__ import annotations

from simdist.core import dtypes
from simdist.keras import backend

__all__ = ["Policy", "global_policy", "set_global_policy", "layer_policy", "serialize"]

_BFLOAT16_REFUSED = (
    "{name!r} is not in simdist: NumPy has no bfloat16 dtype (it would need ml_dtypes, which "
    "simdist does not depend on), so bfloat16 rounding cannot be simulated honestly. Use "
    "'mixed_float16' (float16 compute, float32 variables) or 'float32'."
)


def _parse(name: str) -> tuple[str, str]:
    if name == "mixed_float16":
        return "float16", "float32"
    if name in ("mixed_bfloat16", "bfloat16"):
        raise ValueError(_BFLOAT16_REFUSED.format(name=name))
    if name.endswith("_float32_vars"):
        raise ValueError(
            f"Policies ending in '_float32_vars' have been removed from TensorFlow. Please "
            f"use the 'mixed_float16' policy instead. Got policy name: '{name}'"
        )
    try:
        dtype = dtypes.as_dtype(name).name
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"Cannot convert value {name} to a mixed precision Policy. Valid policies include "
            "'mixed_float16', 'mixed_bfloat16', and the name of any dtype such as 'float32'."
        ) from error
    return dtype, dtype


class Policy:
    """A dtype policy for a Keras layer (``tf.keras.mixed_precision.Policy``).

    >>> import simdist as tf
    >>> policy = tf.keras.mixed_precision.Policy("mixed_float16")
    >>> policy.compute_dtype, policy.variable_dtype
    ('float16', 'float32')

    Raises:
        TypeError: a name that is not a string (a DType: pass ``dtype.name``).
        ValueError: a name that is no policy; ``"mixed_bfloat16"`` (see the module).
    """

    def __init__(self, name: str) -> None:
        if isinstance(name, dtypes.DType):
            raise TypeError(
                "'name' must be a string, not a DType. Instead, pass DType.name. "
                f"Received: name={name.name}"
            )
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, but got: {name}")
        self._name = name
        self._compute_dtype, self._variable_dtype = _parse(name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        """The dtype of the layer's computations (its inputs and outputs)."""
        return self._compute_dtype

    @property
    def variable_dtype(self) -> str:
        """The dtype the layer's weights are created in."""
        return self._variable_dtype

    def __repr__(self) -> str:
        return f'<Policy "{self._name}">'

    def __eq__(self, other) -> bool:
        return isinstance(other, Policy) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)

    def get_config(self) -> dict:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None) -> Policy:
        return cls(config["name"])


_GLOBAL: list = [None]  # the policy set by set_global_policy (None: floatx's)


def global_policy() -> Policy:
    """The policy of layers built without ``dtype=`` (default: ``Policy(floatx())``)."""
    return _GLOBAL[0] if _GLOBAL[0] is not None else Policy(backend.floatx())


def set_global_policy(policy) -> None:
    """Make ``policy`` (a Policy or its name; ``None``: back to floatx) the global policy.

    Layers built afterwards follow it; layers that exist keep theirs (as Keras 2).

    Raises:
        ValueError: a policy whose compute dtype is not floating (``"int32"``).
    """
    if policy is not None and not isinstance(policy, Policy):
        policy = Policy(policy)
    if policy is not None and not dtypes.as_dtype(policy.compute_dtype).is_floating:
        raise ValueError(
            "set_global_policy can only be used to set the global policy to floating-point "
            'policies, such as "float32" and "mixed_float16", but got policy: '
            f"{policy.name}"
        )
    _GLOBAL[0] = policy


def layer_policy(dtype) -> Policy:
    """The policy of a layer built with ``dtype=`` (as Keras 2's ``_set_dtype_policy``).

    ``None``: the global policy; a Policy; its serialized dict; a policy name or a dtype.
    """
    if dtype is None:
        return global_policy()
    if isinstance(dtype, Policy):
        return dtype
    if isinstance(dtype, dict):
        return Policy.from_config(dtype.get("config", dtype))
    if isinstance(dtype, str) and dtype.startswith("mixed_"):
        return Policy(dtype)
    return Policy(dtypes.as_dtype(dtype).name)


def serialize(policy: Policy):
    """A layer config's ``dtype``: the dtype name for a one-dtype policy, else Keras's dict."""
    if policy.compute_dtype == policy.variable_dtype == policy.name:
        return policy.name
    return {
        "module": "keras.mixed_precision",
        "class_name": "Policy",
        "config": policy.get_config(),
        "registered_name": None,
    }

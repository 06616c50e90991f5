"""``tf.config.optimizer``: the graph optimizer's switches (XLA auto-clustering, Grappler).

simdist has no graphs to optimize or compile: ops run one by one on NumPy, so these
settings are kept and read back as TF reads them and change nothing. A program that turns
XLA on (``set_jit(True)``) runs, with the same numbers as without it; XLA's own rounding
(fused ops, reassociated sums on a GPU) is not simulated.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_experimental_options", "get_jit", "set_experimental_options", "set_jit"]

_DEFAULT_OPTIONS = {"disable_model_pruning": False, "disable_meta_optimizer": False}
_state: dict[str, Any] = {"jit": "", "options": {}}


def set_jit(enabled) -> None:
    """``True`` or ``"autoclustering"`` turns XLA auto-clustering on, ``False`` or ``""``
    off (recorded only, module docstring).

    Raises:
        ValueError: any other value.
    """
    if enabled is True or enabled == "autoclustering":
        _state["jit"] = "autoclustering"
    elif enabled is False or enabled == "":
        _state["jit"] = ""
    else:
        raise ValueError(f"set_jit takes True, False, 'autoclustering' or '', got {enabled!r}.")


def get_jit() -> str:
    """``"autoclustering"`` when ``set_jit`` turned it on, else ``""``."""
    return _state["jit"]


def set_experimental_options(options: dict) -> None:
    """Grappler's options by name (``{"layout_optimizer": False, ...}``); recorded only.

    Raises:
        TypeError: ``options`` is not a dict of option names.
    """
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise TypeError(f"options must be a dict of option names, got {options!r}.")
    _state["options"].update(options)


def get_experimental_options() -> dict:
    """The options set, with TF's two defaults (``disable_model_pruning``,
    ``disable_meta_optimizer``: False)."""
    return {
        **_state["options"],
        **{k: v for k, v in _DEFAULT_OPTIONS.items() if k not in _state["options"]},
    }

"""The fuzz suite's contract: a call returns, or raises a documented class with a message.

The documented classes are read from the ```errors block of docs/errors.md (written once
there). :func:`outcome` runs one call and returns ``("ok", value)`` or ``("raised", error)``,
failing the test for anything else: an undocumented class, an empty message, or one of the
classes that mean a lookup or a parser failed deep inside (``UnicodeDecodeError`` is a
``ValueError``, but never an answer to bad input).
"""

from __future__ import annotations

import builtins
import importlib
import json
import pathlib
import re

from hypothesis import HealthCheck, settings

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Subclasses of a documented class that still mean "failed deep inside".
NEVER = (UnicodeError, json.JSONDecodeError, IndexError, RecursionError, ZeroDivisionError)


def documented_classes() -> tuple[type[BaseException], ...]:
    text = (ROOT / "docs" / "errors.md").read_text()
    blocks = re.findall(r"```errors\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/errors.md must hold exactly one ```errors block"
    classes = []
    for line in blocks[0].strip().splitlines():
        name = line.split()[0]
        module, _, attr = name.rpartition(".")
        classes.append(getattr(importlib.import_module(module) if module else builtins, attr))
    return tuple(classes)


DOCUMENTED = documented_classes()


def check_error(error: BaseException) -> BaseException:
    """Fail unless ``error`` is of a documented class, not a deep one, with a message."""
    assert isinstance(error, DOCUMENTED) and not isinstance(error, NEVER), (
        f"undocumented {type(error).__module__}.{type(error).__name__}: {error}"
    )
    assert str(error).strip(), f"{type(error).__name__} with an empty message"
    return error


def outcome(call, *args, **kwargs):
    """``("ok", result)`` or ``("raised", error)`` for a documented error; else the test fails
    (the undocumented exception propagates, chained, so its traceback shows where)."""
    try:
        return "ok", call(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - checked against the documented list
        try:
            check_error(error)
        except AssertionError as failure:
            raise failure from error
        return "raised", error


def budget(examples: int) -> settings:
    """Hypothesis settings of one fuzz test: ``examples`` in CI (the suite fits in seconds),
    or the loaded profile's count where it asks for more (``HYPOTHESIS_PROFILE=fuzz-long``,
    tests/conftest.py)."""
    loaded = settings.default.max_examples
    return settings(
        max_examples=loaded if loaded > 100 else examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )

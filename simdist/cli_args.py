"""Value types for the ``simdist`` command's flags: numbers in range, files that exist.

Each is an argparse ``type=``: a bad value raises ``argparse.ArgumentTypeError``, so argparse
prints ``simdist SUBCOMMAND: error: argument --flag: <what was wrong>`` and exits with status
2, naming the flag. Every subcommand takes its numbers and paths through these, so none
answers a bad value with a traceback, a silent default or unbounded work.

>>> count = integer(minimum=1)
>>> count("1e3")
1000
>>> count("0")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be an integer >= 1, got '0'
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable

__all__ = [
    "INT64_MAX",
    "integer",
    "integer_list",
    "number",
    "nonempty",
    "script_file",
    "read_text_file",
    "output_file",
]

INT64_MAX = 2**63 - 1  # TensorFlow's sizes and seeds are int64


def _range_text(minimum, maximum) -> str:
    if minimum is not None and maximum is not None and maximum != INT64_MAX:
        return f" in [{minimum}, {maximum}]"
    if minimum is not None:
        return f" >= {minimum}"
    return ""


def _parse_integer(text: str) -> int | None:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:  # 1e7, 1E6: an integer written as a float
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or not value.is_integer() or abs(value) > 2**64:
        return None
    return int(value)


def integer(minimum: int | None = None, maximum: int = INT64_MAX) -> Callable[[str], int]:
    """An argparse type: an integer (``12``, ``1e3``) in ``[minimum, maximum]``."""

    def parse(text: str) -> int:
        value = _parse_integer(text)
        if value is None or (minimum is not None and value < minimum) or value > maximum:
            raise argparse.ArgumentTypeError(
                f"must be an integer{_range_text(minimum, maximum)}, got {text!r}"
            )
        return value

    parse.__name__ = "integer"
    return parse


def integer_list(minimum: int = 0, maximum: int = INT64_MAX) -> Callable[[str], list[int]]:
    """An argparse type: comma-separated integers (``3,5,2``), at least one, each in range."""
    one = integer(minimum, maximum)

    def parse(text: str) -> list[int]:
        parts = [p for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(
                f"must be comma-separated integers{_range_text(minimum, maximum)}, e.g. 3,5,2; "
                f"got {text!r}"
            )
        values = []
        for p in parts:
            try:
                values.append(one(p))
            except argparse.ArgumentTypeError:
                raise argparse.ArgumentTypeError(
                    f"{p.strip()!r} in {text!r} must be an integer{_range_text(minimum, maximum)}"
                ) from None
        return values

    parse.__name__ = "integer list"
    return parse


def number(
    minimum: float | None = None, *, above: bool = False, maximum: float | None = None
) -> Callable[[str], float]:
    """An argparse type: a finite float ``>= minimum`` (``> minimum`` when ``above``)."""
    bound = "" if minimum is None else f" {'>' if above else '>='} {minimum:g}"
    bound += "" if maximum is None else f" and <= {maximum:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        ok = math.isfinite(value)
        ok = ok and (minimum is None or (value > minimum if above else value >= minimum))
        ok = ok and (maximum is None or value <= maximum)
        if not ok:
            raise argparse.ArgumentTypeError(f"must be a finite number{bound}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


def nonempty(text: str) -> str:
    """An argparse type: a string that is not empty or blank."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _check_readable_file(path: str) -> None:
    if not path.strip():
        raise argparse.ArgumentTypeError("must name a file, got ''")
    if "\x00" in path:
        raise argparse.ArgumentTypeError(f"{path!r} holds a NUL byte; no file can be named so")
    if not os.path.exists(path):
        raise argparse.ArgumentTypeError(f"no such file: {path}")
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} is a directory; name a file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{path} is not readable (permission denied)")


def script_file(path: str) -> str:
    """An argparse type: a readable file holding Python source (it is compiled, not run)."""
    _check_readable_file(path)
    with open(path, "rb") as f:
        source = f.read()
    try:
        compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        where = f" (line {error.lineno})" if getattr(error, "lineno", None) else ""
        reason = getattr(error, "msg", None) or str(error)
        raise argparse.ArgumentTypeError(
            f"{path} is not a Python script: {reason}{where}"
        ) from None
    return path


def read_text_file(path: str) -> str:
    """The UTF-8 text of a readable file; ``argparse.ArgumentTypeError`` saying why not."""
    _check_readable_file(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = data[error.start : error.start + 1]
        raise argparse.ArgumentTypeError(
            f"{path} is not UTF-8 text (byte {error.start} is {byte!r})"
        ) from None


def output_file(path: str) -> str:
    """An argparse type: a file to write (its folder exists and is writable); ``''`` passes
    through (the commands read it as "do not write")."""
    if path == "":
        return path
    if "\x00" in path:
        raise argparse.ArgumentTypeError(f"{path!r} holds a NUL byte; no file can be named so")
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} is a directory; name a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{path}: folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"{path}: folder {folder} is not writable")
    return path

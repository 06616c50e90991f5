"""The Keras 2 console progress bar (``tf.keras.utils.Progbar``) with its exact line formats.

``verbose=1`` redraws one line with ``\\r`` while running and ends it when the epoch ends::

    10/10 [==============================] - 0s 5ms/step - loss: 0.0784

(while running: ``ETA: 0s`` in place of the times, ``>`` at the head of the bar). ``verbose=2``
prints only the final line of an epoch::

    10/10 - 0s - loss: 0.0784 - 52ms/epoch - 5ms/step

A value is shown as ``%.4f``, or ``%.4e`` when its magnitude is 1e-3 or less. The times are
wall-clock measurements; they are printed only, never used in a computation.
"""

from __future__ import annotations

import sys
import time

import numpy as np

__all__ = ["Progbar", "format_time", "format_value"]


def format_time(seconds: float, unit: str) -> str:
    """`` 5ms/step``-style text: seconds, milliseconds or microseconds per ``unit``."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit}"
    return f" {seconds * 1e6:.0f}us/{unit}"


def format_value(value) -> str:
    """A metric value as Keras prints it: ``0.0784``, or ``1.2340e-04`` when tiny."""
    value = float(np.mean(value))
    return f" {value:.4f}" if abs(value) > 1e-3 else f" {value:.4e}"


class Progbar:
    """A progress bar for ``target`` steps (``None``: unknown).

    Args:
        target: number of steps, or None when unknown.
        width: bar width in characters.
        verbose: 1 for the bar, 2 for one line per epoch, 0 for nothing.
        interval: minimum seconds between redraws (the final draw always happens).
        unit_name: the unit of the per-step time.
        stream: where to write (``sys.stdout`` at each write by default).
    """

    def __init__(
        self, target, width=30, verbose=1, interval=0.05, unit_name="step", stream=None
    ) -> None:
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self._stream = stream
        self._values: dict = {}
        self._total_width = 0
        self._seen_so_far = 0
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step = None

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stdout
        stream.write(text)
        stream.flush()

    def update(self, current: int, values=None, finalize=None) -> None:
        """Show ``current`` steps done with ``values`` (``[(name, value), ...]``).

        Values are shown as given (Keras's "stateful metrics": the model already averages).
        """
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or []:
            self._values[name] = value
        self._seen_so_far = current
        now = time.time()
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw_bar(current, now, finalize)
        elif self.verbose == 2 and finalize:
            self._draw_line(current, now)
        self._last_update = now

    def _values_text(self) -> str:
        return "".join(f" - {k}:{format_value(v)}" for k, v in self._values.items())

    def _time_per_step(self, current: int, now: float) -> float:
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            return (now - self._time_after_first_step) / (current - 1)
        return (now - self._start) / current

    def _draw_bar(self, current: int, now: float, finalize: bool) -> None:
        previous = self._total_width
        if self.target is not None:
            digits = int(np.log10(self.target)) + 1 if self.target > 0 else 1
            bar = f"{current:{digits}d}/{self.target} ["
            done = int(self.width * current / self.target) if self.target else self.width
            if done > 0:
                bar += "=" * (done - 1) + ("=" if current >= self.target else ">")
            bar += "." * (self.width - done) + "]"
        else:
            bar = f"{current:7d}/Unknown"
        per_step = self._time_per_step(current, now)
        if self.target is None or finalize:
            info = f" - {now - self._start:.0f}s" + format_time(per_step, self.unit_name)
        else:
            eta = per_step * (self.target - current)
            if eta > 3600:
                text = f"{int(eta // 3600)}:{int(eta % 3600) // 60:02d}:{int(eta % 60):02d}"
            elif eta > 60:
                text = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                text = f"{eta:.0f}s"
            info = f" - ETA: {text}"
        line = bar + info + self._values_text()
        self._total_width = len(line)
        if previous > len(line):
            line += " " * (previous - len(line))
        self._write("\r" + line + ("\n" if finalize else ""))

    def _draw_line(self, current: int, now: float) -> None:
        digits = int(np.log10(self.target)) + 1 if self.target else 1
        count = f"{current:{digits}d}/{self.target}" if self.target else f"{current}"
        elapsed = now - self._start
        line = count + f" - {elapsed:.0f}s" + self._values_text()
        steps = self.target or max(current, 1)
        line += " -" + format_time(elapsed, "epoch")
        line += " -" + format_time(elapsed / steps, self.unit_name)
        self._write(line + "\n")

    def mark_first_step(self) -> None:
        """Record the end of the first step (its start-up cost is left out of step times)."""
        if self._time_after_first_step is None:
            self._time_after_first_step = time.time()

    def add(self, n: int, values=None) -> None:
        """Advance by ``n`` steps."""
        self.update(self._seen_so_far + n, values)

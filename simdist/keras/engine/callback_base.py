"""The callback protocol of ``fit``/``evaluate``/``predict``: Callback, CallbackList, History,
ProgbarLogger.

Hooks are called in this order by ``fit``: ``on_train_begin``; per epoch
``on_epoch_begin``, per step ``on_train_batch_begin``/``on_train_batch_end`` (logs: the
running means of the loss and metrics), then validation (``on_test_*``), then
``on_epoch_end`` (logs: the epoch's loss and metrics, and ``val_*``); ``on_train_end``.
Setting ``model.stop_training = True`` in a hook ends training after the current epoch.
"""

from __future__ import annotations

import inspect

from simdist.keras.engine.progbar import Progbar

__all__ = ["Callback", "CallbackList", "History", "ProgbarLogger"]


class Callback:
    """Base class of callbacks: override the hooks you need (all do nothing here)."""

    def __init__(self) -> None:
        self.model = None
        self.params: dict = {}
        self.validation_data = None

    def set_params(self, params: dict) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self.model = model

    def on_batch_begin(self, batch, logs=None):
        """Same as ``on_train_batch_begin`` (the Keras 1 name)."""

    def on_batch_end(self, batch, logs=None):
        """Same as ``on_train_batch_end`` (the Keras 1 name)."""

    def on_epoch_begin(self, epoch, logs=None):
        """Start of epoch ``epoch`` (0-based)."""

    def on_epoch_end(self, epoch, logs=None):
        """End of epoch ``epoch``; ``logs`` holds the epoch's results."""

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Start of an evaluation step."""

    def on_test_batch_end(self, batch, logs=None):
        """End of an evaluation step."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Start of a prediction step."""

    def on_predict_batch_end(self, batch, logs=None):
        """End of a prediction step; ``logs['outputs']`` holds the batch's outputs."""

    def on_train_begin(self, logs=None):
        """Start of ``fit``."""

    def on_train_end(self, logs=None):
        """End of ``fit`` (also after ``stop_training``; not after an exception)."""

    def on_test_begin(self, logs=None):
        """Start of ``evaluate`` (or of ``fit``'s validation)."""

    def on_test_end(self, logs=None):
        """End of ``evaluate`` (or of ``fit``'s validation)."""

    def on_predict_begin(self, logs=None):
        """Start of ``predict``."""

    def on_predict_end(self, logs=None):
        """End of ``predict``."""


class CallbackList:
    """Calls every callback's hook in order; adds ``History`` and ``ProgbarLogger`` if asked.

    Raises:
        TypeError: an entry that is not a :class:`Callback`.
    """

    def __init__(
        self, callbacks=None, add_history=False, add_progbar=False, model=None, **params
    ) -> None:
        self.callbacks = list(callbacks or [])
        for cb in self.callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(
                    f"callbacks must be tf.keras.callbacks.Callback instances; got {cb!r}."
                )
        self._history = None
        if add_history:
            self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
            if self._history is None:
                self._history = History()
                self.callbacks.append(self._history)
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.callbacks.append(ProgbarLogger())
        # The progress bar prints before the others (so "Epoch 1/2" comes first, as Keras).
        self.callbacks.sort(key=lambda c: not isinstance(c, ProgbarLogger))
        self.model = None
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def set_model(self, model) -> None:
        self.model = model
        if self._history is not None:
            model.history = self._history
        for cb in self.callbacks:
            cb.set_model(model)

    def set_params(self, params: dict) -> None:
        self.params = params
        for cb in self.callbacks:
            cb.set_params(params)

    def _call(self, hook: str, *args) -> None:
        for cb in self.callbacks:
            getattr(cb, hook)(*args)

    def __iter__(self):
        return iter(self.callbacks)


def _forwarder(hook: str):
    """``CallbackList.<hook>``: calls each callback's hook as Keras 2's list does, with the
    logs always given and a dict (``{}`` for none), so ``LambdaCallback(on_train_batch_begin=
    lambda batch, logs: ...)`` gets both arguments."""
    leading = len(inspect.signature(getattr(Callback, hook)).parameters) - 2  # self, logs

    def forward(self, *args, logs=None) -> None:
        if len(args) > leading:
            args, logs = args[:leading], args[leading]
        self._call(hook, *args, {} if logs is None else logs)

    forward.__name__ = hook
    return forward


for _hook in [name for name in vars(Callback) if name.startswith("on_")]:
    setattr(CallbackList, _hook, _forwarder(_hook))


class History(Callback):
    """Records ``history.epoch`` and ``history.history[name]`` (one value per epoch)."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Prints the progress bar (``verbose=1``) or one line per epoch (``verbose=2``).

    ``params['verbose']`` (set by ``fit``) decides; ``Epoch i/n`` is printed before each
    epoch when ``fit`` runs more than one epoch.
    """

    def __init__(self, count_mode: str = "steps", stateful_metrics=None) -> None:
        super().__init__()
        if count_mode == "samples":
            raise ValueError(
                "ProgbarLogger(count_mode='samples') is not yet in simdist; use "
                "count_mode='steps' (the default)."
            )
        if count_mode != "steps":
            raise ValueError(
                f'Unknown `count_mode`: {count_mode!r}. Expected values are ["samples", "steps"].'
            )
        self.progbar = None
        self._seen = 0
        self._mode = None

    def _verbose(self) -> int:
        return int(self.params.get("verbose", 1))

    def _start(self, mode: str, target) -> None:
        self._mode = mode
        self._seen = 0
        verbose = self._verbose() if mode != "test_in_fit" else 0
        self.progbar = Progbar(target=target, verbose=verbose)

    def on_train_begin(self, logs=None):
        self._epochs = self.params.get("epochs", 1)

    def on_epoch_begin(self, epoch, logs=None):
        if self._verbose() and self._epochs > 1:
            print(f"Epoch {epoch + 1}/{self._epochs}")
        self._start("train", self.params.get("steps"))

    def on_train_batch_end(self, batch, logs=None):
        self._batch(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finish(logs)

    def on_test_begin(self, logs=None):
        if self._mode == "train":  # validation inside fit: no bar of its own
            self._saved_train = (self.progbar, self._seen)
            self._mode = "test_in_fit"
            return
        self._start("test", self.params.get("steps"))

    def on_test_batch_end(self, batch, logs=None):
        if self._mode == "test":
            self._batch(batch, logs)

    def on_test_end(self, logs=None):
        if self._mode == "test_in_fit":
            self.progbar, self._seen = self._saved_train
            self._mode = "train"
            return
        self._finish(logs)

    def on_predict_begin(self, logs=None):
        self._start("predict", self.params.get("steps"))

    def on_predict_batch_end(self, batch, logs=None):
        self._batch(batch, None)

    def on_predict_end(self, logs=None):
        self._finish(None)

    def _batch(self, batch, logs) -> None:
        if self.progbar is None:  # a batch hook without its begin hook: start a bar now
            self._start(self._mode or "train", self.params.get("steps"))
        self._seen = batch + 1
        if self._seen == 1:
            self.progbar.mark_first_step()
        if self.progbar.target is None or self._seen < self.progbar.target:
            self.progbar.update(self._seen, _items(logs), finalize=False)

    def _finish(self, logs) -> None:
        if self.progbar is None:
            return
        if self.progbar.target is None:
            self.progbar.target = self._seen
        self.progbar.update(self._seen, _items(logs), finalize=True)
        self.progbar = None
        self._mode = None


def _items(logs) -> list:
    return [(k, v) for k, v in (logs or {}).items() if k not in ("outputs", "batch", "size")]

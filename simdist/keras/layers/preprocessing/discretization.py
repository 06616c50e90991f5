"""``Discretization``: numbers to the index of their bin, with bin boundaries given or adapted.

A value ``x`` goes to bin ``i`` where ``bin_boundaries[i - 1] <= x < bin_boundaries[i]``
(``0`` below the first boundary, ``len(bin_boundaries)`` from the last one up: TF's
``Bucketize``), as int64 or encoded (``one_hot``/``multi_hot``/``count``, float32).

``adapt(data)`` finds ``num_bins - 1`` boundaries by Keras 2's approximate quantiles, step
for step: each batch (32 rows of an array, as Keras's data handler cuts it; a dataset's own
batches) is sorted and summarised by every ``n * epsilon``-th value, each weighing as many
values as it stands for; the batch's summary is merged with the running one and, once it has
``1 / epsilon`` entries or more, compressed by interpolating its weighted cumulative
distribution at ``epsilon, 2 epsilon, ...``; the boundaries are the running summary
compressed the same way at ``1 / num_bins`` steps, the last point dropped. Each ``adapt``
starts afresh.
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers.preprocessing._encoding import encode
from simdist.keras.layers.preprocessing._inputs import adapt_batches, as_array

__all__ = ["Discretization"]

_MODES = ("int", "one_hot", "multi_hot", "count")
_ADAPT_BATCH = 32  # Keras 2's data handler's default batch for arrays


def _summarize(values: np.ndarray, epsilon: float) -> np.ndarray:
    values = np.sort(values.reshape(-1).astype(np.float32))
    increment = int(np.float32(values.size) / np.float32(1.0 / epsilon))
    step = max(increment, 1)
    boundaries = values[increment::step]
    return np.stack([boundaries, np.full_like(boundaries, np.float32(step))])


def _compress(summary: np.ndarray, epsilon: float) -> np.ndarray:
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_percents = cum_weights / cum_weights[-1]
    bins = np.interp(percents, cum_percents, summary[0])
    cum_weights = np.interp(percents, cum_percents, cum_weights)
    weights = cum_weights - np.concatenate(([0.0], cum_weights[:-1]))
    return np.stack([bins, weights]).astype(np.float32)


def _merge(new: np.ndarray, running: np.ndarray, epsilon: float) -> np.ndarray:
    merged = np.concatenate([new, running], axis=1)
    merged = merged[:, np.argsort(merged[0], kind="stable")]
    return _compress(merged, epsilon)


class Discretization(Layer):
    """Bin numbers by ``bin_boundaries`` (or ``num_bins`` bins found by ``adapt``).

    Raises:
        ValueError: both or a negative ``num_bins`` and ``bin_boundaries``; an unknown
            ``output_mode``; ``output_mode='int'`` with a float dtype; ``sparse=True`` with
            ``int``; ``adapt`` of a layer given ``bin_boundaries``, or without ``num_bins``.
        NotImplementedError: ``sparse=True`` (simdist has no sparse tensors).
    """

    def __init__(
        self,
        bin_boundaries=None,
        num_bins=None,
        epsilon=0.01,
        output_mode="int",
        sparse=False,
        **kwargs,
    ) -> None:
        if "bins" in kwargs:  # Keras 2's deprecated argument
            bins = kwargs.pop("bins")
            if isinstance(bins, int) and num_bins is None:
                num_bins = bins
            elif bin_boundaries is None:
                bin_boundaries = bins
        dtype = kwargs.pop("dtype", None)
        if dtype is None or (output_mode == "int" and not str(dtype).startswith(("int", "uint"))):
            dtype = "int64" if output_mode == "int" else "float32"
        super().__init__(dtype=dtype, **kwargs)
        if output_mode not in _MODES:
            raise ValueError(
                f"Unknown value for `output_mode`. Allowed values are: {list(_MODES)}. "
                f"Received: output_mode={output_mode!r}"
            )
        if sparse and output_mode == "int":
            raise ValueError(
                "`sparse` may only be true if `output_mode` is `'one_hot'`, `'multi_hot'`, or "
                f"`'count'`. Received: sparse={sparse} and output_mode={output_mode}"
            )
        if sparse:
            raise NotImplementedError("Discretization(sparse=True) is not yet in simdist.")
        if num_bins is not None and num_bins < 0:
            raise ValueError(
                f"`num_bins` must be greater than or equal to 0. You passed `num_bins={num_bins}`"
            )
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(
                "Both `num_bins` and `bin_boundaries` should not be set. You passed "
                f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`"
            )
        if bin_boundaries is not None:
            bin_boundaries = np.asarray(as_array(bin_boundaries), np.float64).reshape(-1)
            bin_boundaries = bin_boundaries.tolist()
        self.input_bin_boundaries = bin_boundaries
        self.bin_boundaries = bin_boundaries if bin_boundaries is not None else []
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = False
        self._summary = np.zeros((2, 0), np.float32)

    def _convert_inputs(self, inputs):
        return inputs

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Find ``num_bins - 1`` boundaries from ``data`` (see the module docstring)."""
        if self.input_bin_boundaries is not None:
            raise ValueError(
                "Cannot adapt a Discretization layer that has been initialized with "
                "`bin_boundaries`, use `num_bins` instead. You passed "
                f"`bin_boundaries={self.input_bin_boundaries}`."
            )
        if not self.num_bins:
            raise ValueError("Discretization.adapt needs `num_bins` (a positive number).")
        from simdist.data.dataset import Dataset

        if batch_size is None and not isinstance(data, Dataset):
            batch_size = _ADAPT_BATCH
        self.reset_state()
        for batch in adapt_batches(data, batch_size, steps):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data) -> None:
        """Merge one batch into the running summary."""
        values = np.asarray(as_array(data), np.float32)
        self._summary = _merge(_summarize(values, self.epsilon), self._summary, self.epsilon)

    def finalize_state(self) -> None:
        """Set ``bin_boundaries`` from the running summary."""
        if self.input_bin_boundaries is not None:
            return
        boundaries = _compress(self._summary, 1.0 / self.num_bins)[0, :-1]
        self.bin_boundaries = [float(b) for b in boundaries]

    def reset_state(self) -> None:
        self._summary = np.zeros((2, 0), np.float32)

    def call(self, inputs) -> Tensor:
        values = as_array(inputs)
        if values.dtype.kind not in "iuf":
            raise ValueError(
                f"Discretization layer '{self.name}' bins numbers, got inputs of dtype "
                f"{values.dtype}."
            )
        boundaries = np.asarray(self.bin_boundaries, np.float32)
        compared = values.astype(np.float32) if values.dtype.kind != "f" else values
        indices = np.searchsorted(boundaries.astype(compared.dtype), compared, side="right")
        if self.output_mode == "int":
            return convert_to_tensor(indices.astype(self.dtype))
        depth = len(self.bin_boundaries) + 1
        return encode(indices, depth, self.output_mode, name=self.name)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        adapted = self.input_bin_boundaries is None and bool(self.bin_boundaries)
        return {
            **super().get_config(),
            "bin_boundaries": list(self.bin_boundaries) if adapted else self.input_bin_boundaries,
            "num_bins": None if adapted else self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }

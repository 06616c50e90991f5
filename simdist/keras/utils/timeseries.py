"""``timeseries_dataset_from_array``: sliding windows over an array as a ``tf.data`` dataset.

Window ``i`` starts at ``start_index + i * sequence_stride`` and takes ``sequence_length``
rows ``sampling_rate`` apart; there are as many windows as fit before ``end_index`` (and,
with ``targets``, no more than ``len(targets)``), and window ``i``'s target is
``targets[start_index + i * sequence_stride]`` (Keras 2 indexes the targets by the window's
start). With ``shuffle`` the start positions are shuffled as Keras 2 shuffles them (NumPy's
``RandomState(seed)``), and then the windows by ``Dataset.shuffle(batch_size * 8, seed)``
(simdist's stream, so the order differs from TF's); batches of ``batch_size`` (``None``:
single windows).
"""

from __future__ import annotations

import numpy as np

__all__ = ["timeseries_dataset_from_array"]


def _check(data, start_index, end_index, sampling_rate, sequence_stride) -> None:
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError(
                f"`start_index` must be 0 or greater. Received: start_index={start_index}"
            )
        if start_index >= n:
            raise ValueError(
                "`start_index` must be lower than the length of the data. Received: "
                f"start_index={start_index}, for data of length {n}"
            )
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(
                "`end_index` must be higher than `start_index`. Received: "
                f"start_index={start_index}, and end_index={end_index} "
            )
        if end_index >= n:
            raise ValueError(
                "`end_index` must be lower than the length of the data. Received: "
                f"end_index={end_index}, for data of length {n}"
            )
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise ValueError(
                f"`{name}` must be lower than the length of the data. Received: "
                f"{name}={value}, for data of length {n}"
            )


def timeseries_dataset_from_array(
    data,
    targets,
    sequence_length,
    sequence_stride=1,
    sampling_rate=1,
    batch_size=128,
    shuffle=False,
    seed=None,
    start_index=None,
    end_index=None,
):
    """A dataset of ``(window, target)`` pairs, or windows when ``targets`` is None.

    Raises:
        ValueError: a start or end index out of range or out of order, a non-positive
            ``sampling_rate``/``sequence_stride`` or one not below the data's length.
    """
    from simdist.data.dataset import Dataset

    _check(data, start_index, end_index, sampling_rate, sequence_stride)
    start = 0 if start_index is None else start_index
    end = len(data) if end_index is None else end_index
    count = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        count = min(count, len(targets))
    positions = np.arange(0, max(count, 0), sequence_stride, dtype=np.int64)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1000000)
        np.random.RandomState(seed).shuffle(positions)
    values = np.asarray(data)[start:end]
    offsets = np.arange(sequence_length) * sampling_rate
    windows = values[positions[:, None] + offsets[None, :]]  # [windows, length, ...]
    if targets is None:
        dataset = Dataset.from_tensor_slices(windows)
    else:
        picked = np.asarray(targets)[start:end][positions]
        dataset = Dataset.from_tensor_slices((windows, picked))
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=1024, seed=seed)
    return dataset

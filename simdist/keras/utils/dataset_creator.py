"""``tf.keras.utils.experimental.DatasetCreator``: a dataset function for ``Model.fit``.

``fit`` calls it once per input pipeline through
``strategy.distribute_datasets_from_function(creator, options=creator.input_options)``
(every strategy; with ``ParameterServerStrategy`` once per worker through the coordinator),
so each pipeline builds, shards and batches its own dataset from its
``tf.distribute.InputContext``. As in Keras 2, ``steps_per_epoch`` is required and the
iterator runs on across epochs (shuffle inside the dataset function).
"""

from __future__ import annotations

from simdist.data.dataset import Dataset
from simdist.distribute.input_context import InputOptions

__all__ = ["DatasetCreator"]


class DatasetCreator:
    """Wraps ``dataset_fn(input_context) -> tf.data.Dataset`` for ``Model.fit``.

    Raises:
        TypeError: ``dataset_fn`` is not callable, or ``input_options`` is not a
            ``tf.distribute.InputOptions``.
    """

    def __init__(self, dataset_fn, input_options=None) -> None:
        if not callable(dataset_fn):
            raise TypeError(
                f"`dataset_fn` for `DatasetCreator` must be a `callable`. Received: {dataset_fn}"
            )
        if input_options and not isinstance(input_options, InputOptions):
            raise TypeError(
                "`input_options` for `DatasetCreator` must be a `tf.distribute.InputOptions`. "
                f"Received: {input_options}"
            )
        self.dataset_fn = dataset_fn
        self.input_options = input_options

    def __call__(self, *args, **kwargs) -> Dataset:
        dataset = self.dataset_fn(*args, **kwargs)
        if not isinstance(dataset, Dataset):
            raise TypeError(
                "The `callable` provided to `DatasetCreator` must return a Dataset. It "
                f'returns "{dataset}"'
            )
        return dataset

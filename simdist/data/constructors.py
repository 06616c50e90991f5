"""``tf.data.Dataset``'s static constructors: the sources and the mixtures of datasets.

``Dataset`` inherits them from :class:`SourceConstructors` (this module imports the node
modules lazily, inside each constructor, so it sits below ``simdist.data.dataset``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from simdist.core import dtypes

if TYPE_CHECKING:
    from simdist.data.dataset import Dataset

__all__ = ["SourceConstructors"]


class SourceConstructors:
    """The ``Dataset.from_*``, ``range``, ``zip``, ``random``, ``counter``,
    ``sample_from_datasets`` and ``choose_from_datasets`` constructors."""

    @staticmethod
    def from_tensor_slices(tensors, name: str | None = None) -> Dataset:
        """One element per slice along the first dimension of every component."""
        from simdist.data import sources

        return sources.TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors, name: str | None = None) -> Dataset:
        """A dataset of exactly one element, ``tensors``."""
        from simdist.data import sources

        return sources.TensorDataset(tensors)

    @staticmethod
    def range(*args, output_type=None, name: str | None = None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars (by default)."""
        from simdist.data import sources

        return sources.RangeDataset(*args, output_type=output_type)

    @staticmethod
    def from_generator(
        generator: Callable,
        output_types=None,
        output_shapes=None,
        args=None,
        output_signature=None,
        name: str | None = None,
    ) -> Dataset:
        """Elements yielded by ``generator(*args)``, checked against ``output_signature``."""
        from simdist.data import sources

        return sources.GeneratorDataset(
            generator, output_types, output_shapes, args, output_signature
        )

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name: str | None = None) -> Dataset:
        """The files matching ``file_pattern`` (a glob, or a list of globs), as strings."""
        from simdist.data import files

        return files.list_files(file_pattern, shuffle=shuffle, seed=seed)

    @staticmethod
    def zip(*datasets, name: str | None = None) -> Dataset:
        """Elements of several datasets side by side, as the structure of ``datasets``."""
        from simdist.data import transforms

        return transforms.ZipDataset(datasets[0] if len(datasets) == 1 else datasets)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name: str | None = None) -> Dataset:
        """Uniformly random int64 scalars, forever (simdist's seeded stream)."""
        from simdist.data import sampling

        return sampling.RandomDataset(seed, rerandomize_each_iteration)

    @staticmethod
    def counter(start=0, step=1, dtype=dtypes.int64, name: str | None = None) -> Dataset:
        """``start, start + step, ...`` forever."""
        from simdist.data import sampling

        return sampling.CounterDataset(start, step, dtype)

    @staticmethod
    def sample_from_datasets(
        datasets,
        weights=None,
        seed=None,
        stop_on_empty_dataset: bool = False,
        rerandomize_each_iteration=None,
    ) -> Dataset:
        """Elements drawn from ``datasets`` at random with probabilities ``weights``."""
        from simdist.data import sampling

        return sampling.SampleDataset(
            datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration
        )

    @staticmethod
    def choose_from_datasets(
        datasets, choice_dataset, stop_on_empty_dataset: bool = True
    ) -> Dataset:
        """Elements of ``datasets[i]`` for each ``i`` that ``choice_dataset`` yields."""
        from simdist.data import sampling

        return sampling.ChooseDataset(datasets, choice_dataset, stop_on_empty_dataset)

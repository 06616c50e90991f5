"""Keras masks: which time steps of a sequence are real, carried on the tensors themselves.

As in Keras 2, a mask is a bool tensor attached to a layer's output as ``_keras_mask``
(``[batch, time]`` for ``[batch, time, features]`` values). A layer call:

1. reads the masks of its inputs (or takes ``mask=`` given explicitly);
2. passes them to ``call(..., mask=...)`` when ``call`` has a ``mask`` argument;
3. when the layer ``supports_masking``, attaches ``compute_mask(inputs, mask)`` to its
   outputs (unless ``call`` attached masks itself). A layer that does not support masking
   drops the mask (its outputs carry none).

``Embedding(mask_zero=True)`` and ``Masking`` make masks; Dense, Activation, Dropout, the
normalizations and the merge layers pass them on (the merge layers combine them); the
recurrent layers skip masked steps (the state and the output are carried over unchanged) and
return the mask with ``return_sequences=True``; ``GlobalAveragePooling1D`` averages over the
unmasked steps. Keras's compiled losses and metrics weight each element by the mask of the
prediction (:mod:`simdist.keras.engine.compile_utils`), and a ``Loss`` object averages over
the unmasked elements.
"""

from __future__ import annotations

from simdist.core import nest
from simdist.core.tensor import Tensor

__all__ = ["mask_of", "masks_of", "attach_output_masks", "set_mask"]


def mask_of(value):
    """The Keras mask attached to ``value`` (None when there is none)."""
    return getattr(value, "_keras_mask", None) if isinstance(value, Tensor) else None


def masks_of(inputs):
    """The inputs' masks: one mask, a list (one per input, None where unmasked), or None."""
    if isinstance(inputs, (list, tuple)):
        masks = [mask_of(x) for x in inputs]
        return masks if any(m is not None for m in masks) else None
    return mask_of(inputs)


def set_mask(value, mask) -> None:
    """Attach ``mask`` to ``value`` (a Tensor; anything else cannot carry one)."""
    if isinstance(value, Tensor):
        value._keras_mask = mask


def attach_output_masks(layer, inputs, outputs, input_masks) -> None:
    """Step 3 of the module docstring."""
    flat_outputs = nest.flatten(outputs)
    if all(mask_of(x) is not None for x in flat_outputs):
        return  # the layer's call attached them
    masks = layer.compute_mask(inputs, input_masks)
    if masks is None:
        return
    flat_masks = masks if isinstance(masks, (list, tuple)) else [masks]
    for value, mask in zip(flat_outputs, flat_masks, strict=False):
        set_mask(value, mask)

"""docs/keras.md is the current table of Keras names; a missing name says it is not yet in."""

from __future__ import annotations

import pathlib

import pytest

import simdist as tf
from simdist.keras import _surface
from simdist.keras._tf_keras_names import TF_KERAS_NAMES

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "keras.md"


def test_docs_table_is_current():
    assert DOC.read_text(encoding="utf-8") == _surface.render(), (
        "docs/keras.md is out of date: run `python -m simdist.keras._surface > docs/keras.md`"
    )


def test_table_rows_are_looked_up_on_the_package():
    text = _surface.render()
    assert "| `Input` | function |" in text
    assert "| `SyncBatchNormalization` | class |" in text
    missing = next(n for n in TF_KERAS_NAMES["tf.keras.layers"] if not hasattr(tf.keras.layers, n))
    assert f"| `{missing}` | *not yet* |" in text


@pytest.mark.parametrize(
    "module, tf_name",
    [
        (tf.keras, "tf.keras"),
        (tf.keras.layers, "tf.keras.layers"),
        (tf.keras.models, "tf.keras.models"),
        (tf.keras.layers.experimental, "tf.keras.layers.experimental"),
        (tf.keras.layers.experimental.preprocessing, "tf.keras.layers.experimental.preprocessing"),
        (tf.keras.applications, "tf.keras.applications"),
    ],
)
def test_missing_tf_keras_name_says_not_yet_in_simdist(module, tf_name):
    missing = [n for n in TF_KERAS_NAMES[tf_name] if not hasattr(module, n)]
    assert missing, f"{tf_name} has every name now: pick another module for this test"
    with pytest.raises(AttributeError, match=rf"{tf_name}\.{missing[0]} is not yet in simdist"):
        getattr(module, missing[0])
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchName'") as info:
        module.NoSuchName  # noqa: B018
    assert "not yet" not in str(info.value)

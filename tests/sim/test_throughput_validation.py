"""ResNet-50 v1.5 priced by the step model against NVIDIA's published throughput table."""

import math
import pathlib

import numpy as np

from simdist.sim.throughput_validation import PUBLISHED, _model, throughput_markdown, validate

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "cost-model.md"


def test_resnet50_has_keras_resnet50s_weight_count():
    model = _model((224, 224, 3), (3, 4, 6, 3))  # cached: the docs test prices this one
    assert sum(int(np.prod(v.shape)) for v in model.trainable_variables) == 25_557_032


def test_rows_cite_their_source_and_the_machinery_prices_a_small_resnet():
    assert {(r.gpus, r.precision) for r in PUBLISHED} == {
        (1, "TF32 + XLA"), (8, "TF32 + XLA"),
        (1, "mixed precision + XLA"), (8, "mixed precision + XLA"),
    }  # fmt: skip
    assert all("DeepLearningExamples" in r.source for r in PUBLISHED)
    one, eight = validate(PUBLISHED[:2], input_shape=(32, 32, 3), stages=(1, 1, 1, 1))
    assert math.isfinite(one.error) and one.predicted > 0
    # weak scaling: same step on every GPU plus an all-reduce, so at most 8x
    assert one.predicted < eight.predicted <= 8 * one.predicted
    assert eight.step_time >= one.step_time


def test_docs_hold_exactly_the_recomputed_table_and_its_command():
    text = DOCS.read_text(encoding="utf-8")
    assert "python -m simdist.sim.throughput_validation" in text
    assert throughput_markdown() in text, (
        "docs/cost-model.md is stale: paste `python -m simdist.sim.throughput_validation`"
    )

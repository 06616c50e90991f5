"""The published nccl-tests rows: each recomputed, and the docs table is the recomputation."""

import math
import pathlib

from simdist.cost.nccl_published import PUBLISHED
from simdist.cost.nccl_validation import band_summary, validate, validation_markdown

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "cost-model.md"


def test_every_row_has_a_source_a_version_and_a_finite_prediction():
    results = validate()
    assert len(results) == len(PUBLISHED) >= 40
    for r in results:
        assert r.row.source.startswith("https://") and r.row.nccl_version
        assert math.isfinite(r.error) and r.predicted_busbw > 0 and r.predicted_time_us > 0
    summary = band_summary(results)
    assert set(summary) == {">= 128 MiB", "1-64 MiB", "<= 64 KiB"}


def test_docs_print_exactly_the_recomputed_table():
    text = DOCS.read_text(encoding="utf-8")
    assert validation_markdown() in text, (
        "docs/cost-model.md is stale: paste `python -m simdist.cost.nccl_validation` into it"
    )

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


# The band results docs/cost-model.md reports; a change to the model that loses a row fails here
# (and one that wins a row must update this line and the docs together).
DOCUMENTED_WITHIN_TARGET = {">= 128 MiB": (15, 27), "1-64 MiB": (6, 12), "<= 64 KiB": (3, 8)}


def test_band_results_are_the_documented_ones():
    summary = band_summary(validate())
    got = {band: (hits, rows) for band, (rows, _, _, hits) in summary.items()}
    assert got == DOCUMENTED_WITHIN_TARGET


def test_every_row_says_what_nccl_ran_or_that_the_source_does_not_say():
    for row in PUBLISHED:
        assert row.ran.startswith("not stated") or row.ran.split()[0] in ("Ring", "NVLS", "Tree")
        if row.algorithm != "auto" and not row.ran.startswith("not stated"):
            assert row.ran.startswith(row.algorithm.partition(":")[2].capitalize())

"""What the differential test modules share: run a module's snippets on both sides once."""

from __future__ import annotations

import pytest

from simdist.testing import differential


def run_both(snippets) -> tuple[dict, dict]:
    """(simdist's observations, TF's) for every snippet; TF in one subprocess."""
    ids = [s.id for s in snippets]
    assert len(set(ids)) == len(ids), "snippet ids must be unique"
    if not differential.tensorflow_available():
        pytest.skip("TensorFlow is not installed (pip install 'simdist[tensorflow]')")
    theirs = differential.run_tensorflow(snippets)
    ours = differential.run_simdist(snippets)
    return ours, theirs


def check(snippet, both) -> None:
    ours, theirs = both
    problems = differential.compare(snippet, ours[snippet.id], theirs[snippet.id])
    assert not problems, "\n".join(problems)

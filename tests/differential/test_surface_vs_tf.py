"""tf.config, tf.function and tf.data on simdist against TF 2.21: every observable agrees."""

import pytest
from differential_harness import check, run_both
from snippets_surface import SNIPPETS

pytestmark = pytest.mark.slow  # one TensorFlow subprocess for the module (~10 s)


@pytest.fixture(scope="module")
def both():
    return run_both(SNIPPETS)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id)
def test_snippet_agrees_with_tensorflow(snippet, both):
    check(snippet, both)

"""tf.config, tf.function and tf.data on simdist against TF 2.21: every observable agrees."""

import pytest
from differential_harness import check
from snippets_surface import SNIPPETS

# the session's one TensorFlow subprocess (conftest.py); only with --tensorflow
pytestmark = [pytest.mark.slow, pytest.mark.tensorflow]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id)
def test_snippet_agrees_with_tensorflow(snippet, both):
    check(snippet, both)

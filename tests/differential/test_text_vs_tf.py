"""tf.RaggedTensor, tf.ragged, tf.strings and ragged tf.data elements against TF 2.21."""

import pytest
from differential_harness import check
from snippets_text import SNIPPETS

# the session's one TensorFlow subprocess (conftest.py); only with --tensorflow
pytestmark = [pytest.mark.slow, pytest.mark.tensorflow]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id)
def test_snippet_agrees_with_tensorflow(snippet, both):
    check(snippet, both)

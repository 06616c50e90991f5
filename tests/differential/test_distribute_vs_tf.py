"""tf.distribute on simdist against TF 2.21: every snippet's observables agree."""

import pytest
from differential_harness import check
from snippets_distribute import SNIPPETS

# the session's one TensorFlow subprocess (conftest.py); only with --tensorflow
pytestmark = [pytest.mark.slow, pytest.mark.tensorflow]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id)
def test_snippet_agrees_with_tensorflow(snippet, both):
    check(snippet, both)

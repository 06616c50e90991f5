"""One TensorFlow subprocess for every differential snippet of the session (per xdist worker)."""

import pytest
from differential_harness import run_both
from snippets_distribute import SNIPPETS as DISTRIBUTE
from snippets_ops import SNIPPETS as OPS
from snippets_surface import SNIPPETS as SURFACE
from snippets_text import SNIPPETS as TEXT


@pytest.fixture(scope="session")
def both():
    """(simdist's observations, TF's) of every snippet: TF imported once."""
    return run_both(DISTRIBUTE + SURFACE + OPS + TEXT)

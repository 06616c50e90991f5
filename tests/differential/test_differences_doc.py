"""docs/differences.md and the harness's records of deliberate differences agree."""

import pathlib

from snippets_distribute import SNIPPETS as DISTRIBUTE
from snippets_ops import SNIPPETS as OPS
from snippets_surface import SNIPPETS as SURFACE
from snippets_text import SNIPPETS as TEXT

from simdist.testing.differential import TYPE_NAMES

DOC = (pathlib.Path(__file__).parents[2] / "docs" / "differences.md").read_text()


def test_every_recorded_difference_is_documented():
    missing = [
        f"{s.id}/{label}"
        for s in DISTRIBUTE + SURFACE + OPS + TEXT
        for label in s.differs
        if f"{s.id}/{label}" not in DOC and not (f"`{s.id}/" in DOC and f"`{label}`" in DOC)
    ]
    assert not missing, f"add these to docs/differences.md: {missing}"


def test_every_renamed_type_is_documented():
    for tf_name, (simdist_name, reason) in TYPE_NAMES.items():
        assert f"type name `{tf_name}`" in DOC and f"`{simdist_name}`" in DOC
        assert reason


def test_every_documented_snippet_row_is_recorded():
    recorded = {f"{s.id}/{label}" for s in DISTRIBUTE + SURFACE + OPS + TEXT for label in s.differs}
    rows = [line for line in DOC.splitlines() if line.startswith("| `") and "/" in line[:60]]
    for row in rows:
        first = row.split("|")[1].strip().split("`")[1]
        assert first in recorded, f"documented but not recorded in a snippet: {first}"

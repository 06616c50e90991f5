"""``tf.io.decode_csv`` and ``tf.data.experimental.CsvDataset`` on simdist's own (against TF
2.21: the ``io.csv`` snippet). Here: a round trip through Python's csv writer."""

from __future__ import annotations

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"),
    max_size=8,
)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(-(2**31), 2**31 - 1), _TEXT, st.floats(-1e6, 1e6)),
        min_size=1,
        max_size=6,
    )
)
def test_what_pythons_csv_writer_quotes_decodes_back(rows):
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_MINIMAL).writerows(
        [(i, s, repr(float(f))) for i, s, f in rows]
    )
    lines = [line.encode() for line in buffer.getvalue().split("\n")[:-1]]
    # an empty string is written as an empty field and comes back as the default, ""
    ints, texts, floats = tf.io.decode_csv(lines, [[0], [""], [tf.constant(0.0, tf.float64)]])
    assert ints.numpy().tolist() == [i for i, _, _ in rows]
    assert [t.decode() for t in texts.numpy().tolist()] == [s for _, s, _ in rows]
    assert floats.numpy().tolist() == [float(f) for _, _, f in rows]


def test_a_csv_dataset_reads_quoted_fields_across_lines_and_both_line_ends(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'id,text\r\n1,"a\nb"\r\n2,plain\n3,"x,""y"""\n')
    ds = tf.data.experimental.CsvDataset(str(path), [[0], [""]], header=True)
    assert [(int(i), t.numpy()) for i, t in ds] == [(1, b"a\nb"), (2, b"plain"), (3, b'x,"y"')]

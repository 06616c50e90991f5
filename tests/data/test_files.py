"""list_files and TextLineDataset over files written in tmp_path (plain, gzip, zlib)."""

import gzip
import zlib

import pytest

import simdist as tf
from simdist import errors
from simdist.data import Dataset, TextLineDataset


@pytest.fixture
def text_files(tmp_path):
    paths = []
    for i, body in enumerate([b"a0\na1\n", b"b0\r\nb1", b"", b"\n\nd2\n"]):
        p = tmp_path / f"part-{i}.txt"
        p.write_bytes(body)
        paths.append(str(p))
    return paths


def lines(ds):
    return list(ds.as_numpy_iterator())


def test_lines_in_file_order_newlines_removed(text_files):
    ds = TextLineDataset(text_files)
    assert lines(ds) == [b"a0", b"a1", b"b0", b"b1", b"", b"", b"d2"]
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert lines(TextLineDataset(text_files[1])) == [b"b0", b"b1"]


def test_reader_records_its_files(text_files):
    ds = TextLineDataset(text_files).map(lambda s: s).batch(2)
    reader = ds._inputs()[0]._inputs()[0]
    assert reader._reads_files
    assert reader._file_names() == text_files
    sharded = reader._with_inputs([reader._inputs()[0].shard(2, 1)])
    assert lines(sharded) == [b"b0", b"b1", b"", b"", b"d2"]


def test_compressed_files(tmp_path):
    gz = tmp_path / "x.txt.gz"
    gz.write_bytes(gzip.compress(b"one\ntwo\n"))
    zl = tmp_path / "x.txt.z"
    zl.write_bytes(zlib.compress(b"three\n"))
    assert lines(TextLineDataset(str(gz), compression_type="GZIP")) == [b"one", b"two"]
    assert lines(TextLineDataset([str(zl)], compression_type="ZLIB")) == [b"three"]
    with pytest.raises(errors.InvalidArgumentError, match="compression_type"):
        TextLineDataset(str(gz), compression_type="BZ2")


def test_missing_file_is_not_found(tmp_path):
    ds = TextLineDataset(str(tmp_path / "nope.txt"))
    with pytest.raises(errors.NotFoundError, match="No such file"):
        lines(ds)


def test_list_files_sorted_without_shuffle(text_files, tmp_path):
    ds = Dataset.list_files(str(tmp_path / "part-*.txt"), shuffle=False)
    assert [n.decode() for n in lines(ds)] == sorted(text_files)
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert int(ds.cardinality()) == 4
    two = Dataset.list_files([str(tmp_path / "part-0*"), str(tmp_path / "part-3*")], shuffle=False)
    assert [n.decode() for n in lines(two)] == [text_files[0], text_files[3]]


def test_list_files_shuffles_deterministically_by_default(text_files, tmp_path):
    pattern = str(tmp_path / "*.txt")
    a = lines(Dataset.list_files(pattern, seed=3))
    b = lines(Dataset.list_files(pattern, seed=3))
    assert a == b and sorted(a) == sorted(n.encode() for n in text_files)


def test_list_files_no_match(tmp_path):
    pattern = str(tmp_path / "*.csv")
    with pytest.raises(errors.InvalidArgumentError, match="No files matched pattern"):
        Dataset.list_files(pattern)


def test_text_lines_from_a_file_dataset(text_files, tmp_path):
    names = Dataset.list_files(str(tmp_path / "part-*.txt"), shuffle=False)
    ds = TextLineDataset(names)
    assert ds._inputs() == [names]
    assert lines(ds)[:2] == [b"a0", b"a1"]
    interleaved = names.interleave(TextLineDataset, cycle_length=2)
    assert lines(interleaved)[:4] == [b"a0", b"b0", b"a1", b"b1"]
    with pytest.raises(TypeError, match="tf.string"):
        TextLineDataset(Dataset.range(3))

"""The on-disk format: npz + checksummed JSON index, no pickle, atomic writes, clear errors."""

import json
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from simdist import errors, train
from simdist.checkpoint import format as ckpt_format
from simdist.checkpoint import integrity


def _data(prefix):
    """The one data file of a checkpoint (its name carries a hash of its content)."""
    (path,) = ckpt_format.data_files(prefix)
    return path


def _rewrite_index(path, index):
    """Write an edited index back with a valid checksum (a deliberate, consistent edit)."""
    index.pop("sha256", None)
    with open(path + ".index", "wb") as f:
        f.write(integrity.checked_document(json.dumps(index)))


def _saved(tmp_path, name="ck"):
    ckpt = train.Checkpoint(w=tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3)))
    return ckpt.write(str(tmp_path / name))


def test_files_are_an_npz_without_pickle_and_a_json_index(tmp_path):
    path = _saved(tmp_path)
    with np.load(_data(path), allow_pickle=False) as archive:
        assert archive.files == ["v0"]
        np.testing.assert_array_equal(archive["v0"], np.arange(6).reshape(2, 3))
    with open(path + ".index", encoding="utf-8") as f:
        index = json.load(f)
    assert index["format"] == "simdist-checkpoint"
    assert index["format_version"] == 2
    assert index["simdist_version"] == tf.__version__
    with open(_data(path), "rb") as f:
        data = f.read()
    assert index["files"] == [integrity.file_entry(os.path.basename(_data(path)), data)]
    assert index["files"][0]["name"].startswith("ck.data-")
    assert index["values"] == {
        "w/.ATTRIBUTES/VARIABLE_VALUE": {"array": "v0", "dtype": "float32", "shape": [2, 3]}
    }
    assert index["object_graph"] == [
        {"children": {"w": 1}},
        {"tensors": {"VARIABLE_VALUE": "w/.ATTRIBUTES/VARIABLE_VALUE"}},
    ]


def test_same_state_gives_byte_identical_files(tmp_path):
    a, b = _saved(tmp_path, "a"), _saved(tmp_path, "b")
    with open(_data(a), "rb") as fa, open(_data(b), "rb") as fb:
        assert fa.read() == fb.read()


def test_missing_checkpoint_is_not_found_with_the_path(tmp_path):
    missing = str(tmp_path / "nope-3")
    with pytest.raises(errors.NotFoundError, match="nope-3.index"):
        train.Checkpoint(v=tf.Variable(1)).restore(missing)


def test_a_directory_instead_of_a_prefix_says_what_to_pass(tmp_path):
    with pytest.raises(errors.NotFoundError, match="latest_checkpoint"):
        train.Checkpoint(v=tf.Variable(1)).restore(str(tmp_path))


def test_missing_data_file_is_not_found(tmp_path):
    path = _saved(tmp_path)
    os.remove(_data(path))
    with pytest.raises(errors.NotFoundError, match=r"ck\.data-[0-9a-f]{16}\.npz"):
        train.Checkpoint(w=tf.Variable(np.zeros((2, 3), np.float32))).restore(path)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_damaged_data_file_is_data_loss(tmp_path, damage):
    path = _saved(tmp_path)
    data_path = _data(path)
    with open(data_path, "rb") as f:
        data = bytearray(f.read())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        data = bytearray()
    with open(data_path, "wb") as f:
        f.write(bytes(data))
    w = tf.Variable(np.zeros((2, 3), np.float32))
    with pytest.raises(errors.DataLossError, match=r"ck\.data-[0-9a-f]{16}\.npz") as info:
        train.Checkpoint(w=w).restore(path)
    assert "restore an earlier checkpoint" in str(info.value)
    np.testing.assert_array_equal(w.numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize(
    "text",
    ['{"format": "simdist-checkpoint", "format_ver', "not json at all", '{"format": "other"}'],
)
def test_damaged_index_is_data_loss(tmp_path, text):
    path = _saved(tmp_path)
    with open(path + ".index", "w", encoding="utf-8") as f:
        f.write(text)
    with pytest.raises(errors.DataLossError, match="ck.index"):
        train.Checkpoint(w=tf.Variable(np.zeros((2, 3), np.float32))).restore(path)


def test_index_pointing_outside_its_graph_is_data_loss(tmp_path):
    path = _saved(tmp_path)
    with open(path + ".index", encoding="utf-8") as f:
        index = json.load(f)
    index["object_graph"][0]["children"]["w"] = 7
    _rewrite_index(path, index)  # checksum valid: the schema check must catch it
    with pytest.raises(errors.DataLossError, match="bad children"):
        train.Checkpoint(w=tf.Variable(np.zeros((2, 3), np.float32))).restore(path)


def test_newer_format_version_is_refused(tmp_path):
    path = _saved(tmp_path)
    with open(path + ".index", encoding="utf-8") as f:
        index = json.load(f)
    index["format_version"] = 99
    with open(path + ".index", "w", encoding="utf-8") as f:
        json.dump(index, f)
    with pytest.raises(errors.UnimplementedError, match="Upgrade simdist"):
        train.Checkpoint(w=tf.Variable(np.zeros((2, 3), np.float32))).restore(path)


def test_unpicklable_dtypes_are_refused(tmp_path):
    with pytest.raises(TypeError, match="never pickles"):
        ckpt_format.write_files(str(tmp_path / "o"), {"k": np.array([object()])}, [{}])
    assert os.listdir(tmp_path) == []


def _listing(directory):
    return sorted(os.listdir(directory))


def test_failure_while_writing_data_leaves_no_file(tmp_path, monkeypatch):
    def crash(fd):
        raise OSError("simulated crash during fsync")

    monkeypatch.setattr(ckpt_format.os, "fsync", crash)
    with pytest.raises(OSError, match="simulated crash"):
        train.Checkpoint(v=tf.Variable(1)).save(str(tmp_path / "ckpt"))
    assert _listing(tmp_path) == []  # no final file, no temporary left behind
    assert train.latest_checkpoint(str(tmp_path)) is None


def test_failure_before_the_index_leaves_no_checkpoint(tmp_path, monkeypatch):
    real_replace = os.replace

    def replace(src, dst):
        if dst.endswith(".index"):
            raise OSError("simulated crash before commit")
        return real_replace(src, dst)

    monkeypatch.setattr(ckpt_format.os, "replace", replace)
    with pytest.raises(OSError, match="before commit"):
        train.Checkpoint(v=tf.Variable(1)).save(str(tmp_path / "ckpt"))
    assert "ckpt-1.index" not in _listing(tmp_path)
    assert not any(name.endswith(".tmp") for name in _listing(tmp_path))
    assert train.latest_checkpoint(str(tmp_path)) is None
    with pytest.raises(errors.NotFoundError, match="interrupted"):
        train.Checkpoint(v=tf.Variable(0)).restore(str(tmp_path / "ckpt-1"))


def test_interrupted_rewrite_never_leaves_a_mismatched_pair(tmp_path, monkeypatch):
    v = tf.Variable([1.0])
    ckpt = train.Checkpoint(v=v)
    prefix = ckpt.write(str(tmp_path / "same"))
    v.assign([2.0])
    real_replace = os.replace

    def replace(src, dst):
        if dst.endswith(".index"):
            raise OSError("crash")
        return real_replace(src, dst)

    monkeypatch.setattr(ckpt_format.os, "replace", replace)
    with pytest.raises(OSError):
        ckpt.write(prefix)
    monkeypatch.undo()
    # The index rename is the commit: it failed, so the old checkpoint is still whole.
    restored = tf.Variable([0.0])
    train.Checkpoint(v=restored).restore(prefix).assert_consumed()
    np.testing.assert_array_equal(restored.numpy(), [1.0])


_DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8])


@given(
    st.dictionaries(
        st.text(alphabet="abc/._-", min_size=1, max_size=8),
        _DTYPES.flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_side=3))),
        max_size=4,
    )
)
def test_any_numeric_arrays_round_trip_exactly(tmp_path_factory, values):
    prefix = str(tmp_path_factory.mktemp("prop") / "p")
    nodes = [{"children": {}}]
    ckpt_format.write_files(prefix, values, nodes)
    index = ckpt_format.read_index(prefix)
    got = ckpt_format.read_values(prefix, index)
    assert list(got) == list(values)
    for key, array in values.items():
        assert got[key].dtype == array.dtype
        np.testing.assert_array_equal(got[key], array)

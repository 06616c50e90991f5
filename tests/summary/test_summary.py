"""tf.summary: the event-file format (TFRecord framing, masked CRC-32C, Event protos), the
default writer and step, and TensorFlow reading the files back (record for record equal to
what TensorFlow's own writer writes)."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import struct
import subprocess
import sys
import threading

import numpy as np
import pytest

import simdist as tf
from simdist.summary import event_file


def _records(path: str) -> list[bytes]:
    data = open(path, "rb").read()
    out, i = [], 0
    while i < len(data):
        (length,) = struct.unpack("<Q", data[i : i + 8])
        header_crc = struct.unpack("<I", data[i + 8 : i + 12])[0]
        assert header_crc == event_file.masked_crc32c(data[i : i + 8])
        body = data[i + 12 : i + 12 + length]
        assert struct.unpack("<I", data[i + 12 + length : i + 16 + length])[0] == (
            event_file.masked_crc32c(body)
        )
        out.append(body)
        i += 16 + length
    assert i == len(data)
    return out


def test_crc32c_of_the_standard_check_string_and_its_mask():
    assert event_file.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert event_file.crc32c(b"") == 0
    crc = event_file.crc32c(b"abc")
    assert event_file.masked_crc32c(b"abc") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) % 2**32


def test_scalars_are_written_on_flush_with_the_default_step(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    assert os.path.basename(writer.path).startswith("events.out.tfevents.")
    assert writer.path.endswith(".v2")
    assert len(_records(writer.path)) == 1  # the version event, at creation
    with writer.as_default(step=7):
        assert tf.summary.scalar("loss", 0.25)
        assert tf.summary.scalar("loss", tf.constant(0.5), step=tf.Variable(8, dtype=tf.int64))
        assert tf.summary.experimental.get_step() == 7
    assert tf.summary.experimental.get_step() is None
    records = _records(writer.path)
    assert len(records) == 3
    assert b"brain.Event:2" in records[0] and b"scalars" in records[1]
    assert np.float32(0.5).tobytes() in records[2]


def test_no_writer_no_record_and_no_step():
    assert tf.summary.scalar("x", 1.0, step=1) is False
    assert tf.summary.should_record_summaries() is False
    with tf.summary.create_noop_writer().as_default():
        assert tf.summary.scalar("x", 1.0, step=1) is False


def test_errors_say_what_to_do(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("x", 1.0)
        with pytest.raises(ValueError, match="needs a scalar"):
            tf.summary.scalar("x", [1.0, 2.0], step=0)
        with pytest.raises(ValueError, match="at least one bucket"):
            tf.summary.histogram("h", [1.0], step=0, buckets=0)
        with tf.summary.record_if(False):
            assert tf.summary.scalar("x", 1.0, step=0) is False
    with pytest.raises(ValueError, match="logdir cannot be empty"):
        tf.summary.create_file_writer("")


def test_the_default_writer_belongs_to_the_thread(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    seen = []
    with writer.as_default(step=1):
        thread = threading.Thread(target=lambda: seen.append(tf.summary.scalar("x", 1.0)))
        thread.start()
        thread.join()
    assert seen == [False]


def test_histogram_buckets_are_tensorboards():
    table = tf.summary.writer._buckets(np.array([0.0, 1.0, 1.0, 3.0]), 3)
    np.testing.assert_array_equal(table[:, 2], [1.0, 2.0, 1.0])
    np.testing.assert_allclose(table[:, 0], [0.0, 1.0, 2.0])
    np.testing.assert_allclose(table[:, 1], [1.0, 2.0, 3.0])
    constant = tf.summary.writer._buckets(np.full(5, 2.0), 4)
    np.testing.assert_array_equal(constant, [[2.0, 2.0, 5.0], [2.0, 2.0, 0.0]] + [[2, 2, 0]] * 2)


_TF_READER = r"""
import glob, json, sys
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import summary_pb2
ours = sys.argv[1]
events = list(tf.compat.v1.train.summary_iterator(glob.glob(ours + "/*")[0]))
out = {"file_version": events[0].file_version, "events": []}
theirs_dir = sys.argv[2]
writer = tf.summary.create_file_writer(theirs_dir)
with writer.as_default():
    for event in events[1:]:
        for value in event.summary.value:
            array = tf.make_ndarray(value.tensor)
            out["events"].append({
                "step": event.step, "tag": value.tag,
                "plugin": value.metadata.plugin_data.plugin_name,
                "data_class": int(value.metadata.data_class),
                "value": (array.reshape(-1)[0].decode("utf-8") if array.dtype.kind in "SOU"
                          else array.tolist()),
            })
            tf.summary.write(value.tag, tf.constant(array), step=event.step,
                             metadata=summary_pb2.SummaryMetadata.FromString(
                                 value.metadata.SerializeToString()))
writer.flush()
theirs = list(tf.compat.v1.train.summary_iterator(glob.glob(theirs_dir + "/*")[0]))
same = []
for a, b in zip(events[1:], theirs[1:]):
    a.wall_time = 0.0
    b.wall_time = 0.0
    same.append(a.SerializeToString() == b.SerializeToString())
out["same_bytes_as_tensorflow"] = same
print(json.dumps(out))
"""


@pytest.mark.tensorflow
@pytest.mark.slow
def test_tensorflow_reads_our_event_files_and_writes_the_same_records(tmp_path):
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("tensorflow is not installed (pip install 'simdist[tensorflow]')")
    ours = tmp_path / "ours"
    writer = tf.summary.create_file_writer(str(ours))
    with writer.as_default():
        tf.summary.scalar("loss", 0.125, step=0)
        tf.summary.scalar("epoch_accuracy", np.float64(0.75), step=3, description="acc")
        tf.summary.scalar("negative_step", 1.0, step=-2)
        tf.summary.histogram("kernel", np.arange(10.0).reshape(2, 5), step=4, buckets=4)
        tf.summary.text("note", "héllo", step=5)
    done = subprocess.run(
        [sys.executable, "-c", _TF_READER, str(ours), str(tmp_path / "theirs")],
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["file_version"] == "brain.Event:2"
    events = result["events"]
    assert [(e["tag"], e["step"], e["plugin"]) for e in events] == [
        ("loss", 0, "scalars"),
        ("epoch_accuracy", 3, "scalars"),
        ("negative_step", -2, "scalars"),
        ("kernel", 4, "histograms"),
        ("note", 5, "text"),
    ]
    assert [e["data_class"] for e in events] == [1, 1, 1, 2, 2]
    assert events[0]["value"] == 0.125 and events[1]["value"] == 0.75
    assert np.asarray(events[3]["value"]).shape == (4, 3)
    assert np.asarray(events[3]["value"])[:, 2].tolist() == [3.0, 2.0, 2.0, 3.0]  # width 2.25
    assert events[4]["value"] == "héllo"
    assert result["same_bytes_as_tensorflow"] == [True] * 5
    assert glob.glob(str(ours / "events.out.tfevents.*"))

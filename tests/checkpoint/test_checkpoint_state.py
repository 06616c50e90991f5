"""The ``checkpoint`` state file: TF's text format, relative paths, parse errors."""

import hashlib
import os

import pytest

import simdist as tf
from simdist import errors, train
from simdist.checkpoint import state


def test_state_file_is_tf_text_format_with_relative_paths(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1))
    ckpt.save(str(tmp_path / "ckpt"))
    ckpt.save(str(tmp_path / "ckpt"))
    with open(tmp_path / "checkpoint", encoding="utf-8") as f:
        checksum, *fields = f.read().splitlines(keepends=True)
    assert "".join(fields) == (
        'model_checkpoint_path: "ckpt-2"\n'
        'all_model_checkpoint_paths: "ckpt-1"\n'
        'all_model_checkpoint_paths: "ckpt-2"\n'
    )
    # a comment (TF's text-format reader skips it): the SHA-256 of the fields
    assert checksum == f"# simdist-sha256: {hashlib.sha256(''.join(fields).encode()).hexdigest()}\n"


def test_every_changed_byte_or_truncation_of_the_state_file_is_detected(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1))
    for _ in range(3):
        ckpt.save(str(tmp_path / "ckpt"))
    path = tmp_path / "checkpoint"
    original = path.read_bytes()
    damaged = [original[:n] for n in range(len(original))]
    damaged += [
        original[:i] + bytes([(original[i] + 1) % 256]) + original[i + 1 :]
        for i in range(len(original))
    ]
    for data in damaged:
        path.write_bytes(data)
        with pytest.raises(errors.DataLossError):
            train.latest_checkpoint(str(tmp_path))
    path.write_bytes(original)
    assert train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-3")


def test_moving_the_directory_keeps_it_readable(tmp_path):
    train.Checkpoint(v=tf.Variable(1)).save(str(tmp_path / "a" / "ckpt"))
    os.rename(tmp_path / "a", tmp_path / "b")
    assert train.latest_checkpoint(str(tmp_path / "b")) == str(tmp_path / "b" / "ckpt-1")


def test_reads_a_file_tensorflow_wrote(tmp_path):
    train.Checkpoint(v=tf.Variable(1)).write(str(tmp_path / "ckpt-5"))
    with open(tmp_path / "checkpoint", "w", encoding="utf-8") as f:
        f.write(
            'model_checkpoint_path: "ckpt-5"\n'
            'all_model_checkpoint_paths: "ckpt-4"\n'
            'all_model_checkpoint_paths: "ckpt-5"\n'
            "all_model_checkpoint_timestamps: 1690000000.5\n"
            "last_preserved_timestamp: 1690000000.1\n"
        )
    # Timestamps are not quoted strings in TF's file; they must not break parsing.
    assert train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-5")


def test_quotes_and_backslashes_survive(tmp_path):
    weird = str(tmp_path / 'we"ird\\name')
    state.update_checkpoint_state(str(tmp_path), weird, [weird])
    got = state.get_checkpoint_state(str(tmp_path))
    assert got.model_checkpoint_path == weird
    assert got.all_model_checkpoint_paths == [weird]


def test_absolute_path_outside_the_directory(tmp_path):
    elsewhere = str(tmp_path / "other" / "ckpt-1")
    state.update_checkpoint_state(str(tmp_path / "here"), elsewhere)
    got = state.get_checkpoint_state(str(tmp_path / "here"))
    assert got.model_checkpoint_path == elsewhere


def test_garbage_state_file_is_data_loss(tmp_path):
    with open(tmp_path / "checkpoint", "w", encoding="utf-8") as f:
        f.write("model_checkpoint_path = ckpt-1\n")
    with pytest.raises(errors.DataLossError, match="line 1"):
        train.latest_checkpoint(str(tmp_path))


def test_no_state_file_means_no_state(tmp_path):
    assert train.get_checkpoint_state(str(tmp_path)) is None

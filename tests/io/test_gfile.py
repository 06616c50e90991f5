"""tf.io.gfile on the local file system, with TF's error classes."""

import pytest

import simdist as tf


def test_files_and_directories_round_trip(tmp_path):
    d = tf.io.gfile.join(str(tmp_path), "a", "b")
    tf.io.gfile.makedirs(d)
    tf.io.gfile.makedirs(d)  # exists: fine
    tf.io.gfile.mkdir(d)  # exists: fine, as TF 2.21
    with tf.io.gfile.GFile(tf.io.gfile.join(d, "x.txt"), "w") as f:
        f.write("one\ntwo\n")
    with tf.io.gfile.GFile("file://" + tf.io.gfile.join(d, "x.txt")) as f:
        assert list(f) == ["one\n", "two\n"]
    assert tf.io.gfile.stat(tf.io.gfile.join(d, "x.txt")).length == 8
    tf.io.gfile.copy(tf.io.gfile.join(d, "x.txt"), tf.io.gfile.join(d, "y.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.io.gfile.copy(tf.io.gfile.join(d, "x.txt"), tf.io.gfile.join(d, "y.txt"))
    tf.io.gfile.rename(tf.io.gfile.join(d, "y.txt"), tf.io.gfile.join(d, "z.txt"))
    assert tf.io.gfile.listdir(d) == ["x.txt", "z.txt"]
    assert tf.io.gfile.glob(tf.io.gfile.join(d, "*.txt")) == [
        tf.io.gfile.join(d, "x.txt"),
        tf.io.gfile.join(d, "z.txt"),
    ]
    walked = list(tf.io.gfile.walk(str(tmp_path)))
    assert [w[0] for w in walked] == [str(tmp_path), str(tmp_path / "a"), d]
    tf.io.gfile.rmtree(tf.io.gfile.join(str(tmp_path), "a"))
    assert not tf.io.gfile.exists(d)


@pytest.mark.parametrize(
    "call",
    [
        lambda p: tf.io.gfile.GFile(p + "/missing").read(),
        lambda p: tf.io.gfile.remove(p + "/missing"),
        lambda p: tf.io.gfile.rmtree(p + "/missing"),
        lambda p: tf.io.gfile.listdir(p + "/missing"),
        lambda p: tf.io.gfile.stat(p + "/missing"),
        lambda p: tf.io.gfile.rename(p + "/missing", p + "/b"),
    ],
)
def test_missing_paths_are_not_found_errors(tmp_path, call):
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        call(str(tmp_path))


def test_remote_schemes_are_refused():
    with pytest.raises(tf.errors.UnimplementedError, match="scheme 'gs' not implemented"):
        tf.io.gfile.exists("gs://bucket/x")

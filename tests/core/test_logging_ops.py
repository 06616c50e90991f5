"""``tf.print``: TF's text for tensors, summarising, separators and streams."""

import io
import sys

import numpy as np

import simdist as tf
from simdist.core.ops.logging_ops import format_tensor


def printed(*inputs, **kwargs) -> str:
    stream = io.StringIO()
    tf.print(*inputs, output_stream=stream, **kwargs)
    return stream.getvalue()


def test_the_examples_of_tfs_docstring():
    tensor = tf.range(10)
    assert printed(tensor) == "[0 1 2 ... 7 8 9]\n"
    assert printed("tensors:", tensor, {2: tensor * 2}) == (
        "tensors: [0 1 2 ... 7 8 9] {2: [0 2 4 ... 14 16 18]}\n"
    )
    a = tf.range(2)
    assert printed(a, a * 2, sep=",") == "[0 1],[0 2]\n"


def test_scalars_floats_bools_and_matrices():
    assert printed(tf.constant(3)) == "3\n"
    assert printed(tf.constant([1.5, 2.0, 1 / 3])) == "[1.5 2 0.333333]\n"
    assert printed(tf.constant([True, False])) == "[1 0]\n"
    assert printed(tf.constant([[1, 2], [3, 4]])) == "[[1 2]\n [3 4]]\n"
    assert printed(tf.Variable([1.0, 2.0])) == "[1 2]\n"
    assert printed("loss", 0.5, end="") == "loss 0.5"


def test_summarize_applies_per_dimension():
    x = np.arange(64).reshape(8, 8)
    text = format_tensor(x, summarize=1)
    assert text == "[[0 ... 7]\n ...\n [56 ... 63]]"
    assert format_tensor(np.arange(6), summarize=3) == "[0 1 2 3 4 5]"
    assert format_tensor(np.arange(7), summarize=-1) == "[0 1 2 3 4 5 6]"


def test_default_stream_is_stderr_at_call_time(capsys):
    tf.print(tf.constant([1, 2]))
    captured = capsys.readouterr()
    assert captured.err == "[1 2]\n" and captured.out == ""
    tf.print("x", output_stream=sys.stdout)
    assert capsys.readouterr().out == "x\n"

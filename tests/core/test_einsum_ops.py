"""einsum: values against np.einsum for random equations, gradients, and TF's errors."""

import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients

SIZES = dict(zip("abcde", [2, 3, 1, 2, 3], strict=True))


@st.composite
def equations(draw):
    """1-3 operands over letters a-e (repeats within an operand allowed), explicit output."""
    count = draw(st.integers(1, 3))
    operands = [
        "".join(draw(st.lists(st.sampled_from("abcde"), max_size=3))) for _ in range(count)
    ]
    used = sorted(set("".join(operands)))
    output = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
    return ",".join(operands) + "->" + output, operands


@settings(max_examples=80)
@given(case=equations(), seed=st.integers(0, 2**16))
def test_einsum_matches_numpy_and_its_gradient(case, seed):
    equation, operands = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal([SIZES[c] for c in subs]) for subs in operands]
    np.testing.assert_allclose(tf.einsum(equation, *arrays).numpy(),
                               np.einsum(equation, *arrays), rtol=1e-12, atol=1e-12)
    check_gradients(lambda *xs: tf.einsum(equation, *xs), *arrays)


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("ij,jk", [(2, 3), (3, 4)]),  # implicit output: alphabetical letters used once
        ("ii", [(3, 3)]),  # trace
        ("ii->i", [(3, 3)]),  # diagonal
        ("...ij,...jk->...ik", [(3, 1, 2, 2), (4, 2, 3)]),  # broadcast batch dims
        ("b...,b->...", [(2, 3, 4), (2,)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ],
)
def test_implicit_ellipsis_and_diagonal_forms(equation, shapes):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    np.testing.assert_allclose(tf.einsum(equation, *arrays).numpy(),
                               np.einsum(equation, *arrays), rtol=1e-12)
    check_gradients(lambda *xs: tf.einsum(equation, *xs), *arrays)


def test_dtype_follows_the_operands():
    assert tf.einsum("ij,jk->ik", tf.ones([2, 2], tf.int32), tf.ones([2, 2], tf.int32)).dtype == (
        tf.int32
    )
    assert tf.einsum("i->", [1.0, 2.0]).dtype == tf.float32


@pytest.mark.parametrize(
    ("call", "error", "phrase"),
    [
        (lambda: tf.einsum("ij,jk->ik", tf.ones([2, 2])), ValueError,
         "2 operands, but 1 were given"),
        (lambda: tf.einsum("ij,jk->ik", tf.ones([2, 2]), tf.ones([3, 2])),
         tf.errors.InvalidArgumentError, "Expected dimension 2"),
        (lambda: tf.einsum("ij,jk->iz", tf.ones([2, 2]), tf.ones([2, 2])),
         ValueError, "names no axis"),
        (lambda: tf.einsum("ijk,jk->i", tf.ones([2, 2]), tf.ones([2, 2])),
         tf.errors.InvalidArgumentError, "Expected input 0 to have rank 3 but got: 2"),
        (lambda: tf.einsum("ij,jk->ik", tf.ones([2, 2]), tf.ones([2, 2], tf.float64)),
         tf.errors.InvalidArgumentError, "float"),
        (lambda: tf.einsum("i1->i", tf.ones([2, 2])), ValueError, "letters"),
        # a size-1 axis broadcasts under `...` only
        (lambda: tf.einsum("ij,jk->ik", tf.ones([2, 1]), tf.ones([3, 4])),
         tf.errors.InvalidArgumentError, "Expected dimension 1 at axis 0"),
    ],
)
def test_bad_equations_raise(call, error, phrase):
    with pytest.raises(error, match=phrase):
        call()


def test_many_letters_with_ellipsis_do_not_collide():
    letters = string.ascii_lowercase[:5]
    a = np.random.default_rng(2).standard_normal((2, 1, 2, 3, 1, 2))
    eq = f"...{letters}->..."
    np.testing.assert_allclose(tf.einsum(eq, a).numpy(), np.einsum(eq, a), rtol=1e-12)

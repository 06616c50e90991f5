"""Optimizers check their numeric hyperparameters at construction, not at fit time (issue 18)."""

import pytest

import simdist as tf

OPT = tf.keras.optimizers
CASES = [
    (OPT.Adam, "beta_1"), (OPT.Adam, "epsilon"), (OPT.AdamW, "beta_2"), (OPT.Adamax, "beta_1"),
    (OPT.Nadam, "beta_2"), (OPT.RMSprop, "rho"), (OPT.RMSprop, "momentum"), (OPT.SGD, "momentum"),
    (OPT.Adagrad, "initial_accumulator_value"), (OPT.Adadelta, "rho"), (OPT.Ftrl, "beta"),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "arg"), CASES)
@pytest.mark.parametrize("bad", ["x", None])
def test_non_numeric_hyperparameter_fails_at_construction(cls, arg, bad):
    with pytest.raises(TypeError, match=f"{arg} must be a number"):
        cls(**{arg: bad})


@pytest.mark.parametrize(("cls", "arg"), CASES)
def test_numbers_and_callables_are_accepted(cls, arg):
    assert getattr(cls(**{arg: 0.5}), arg) == 0.5
    if arg in ("momentum", "initial_accumulator_value") and cls is not OPT.SGD:
        return  # range-checked at construction, as Keras: a number only
    fn = lambda: 0.5  # noqa: E731
    assert getattr(cls(**{arg: fn}), arg) is fn

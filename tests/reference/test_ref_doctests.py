"""The reference's docstring examples run and print what they say."""

import doctest
import importlib

import pytest

MODULES = ["reduce", "collectives", "batching", "variables", "losses", "training"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"simdist_reference.{name}")
    result = doctest.testmod(module)
    assert result.failed == 0

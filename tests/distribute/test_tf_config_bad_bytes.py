"""TF_CONFIG that is not UTF-8 or is nested absurdly deep is a ValueError naming TF_CONFIG."""

import pytest

from simdist.distribute.cluster_resolver.tf_config import parse_tf_config


def test_non_utf8_bytes_are_a_value_error():
    with pytest.raises(ValueError, match="TF_CONFIG is not UTF-8 text"):
        parse_tf_config(b'{"cluster": \xff}')


def test_deeply_nested_json_is_a_value_error():
    with pytest.raises(ValueError, match="TF_CONFIG is nested too deeply"):
        parse_tf_config("[" * 100_000 + "]" * 100_000)


def test_valid_bytes_still_parse():
    assert parse_tf_config(b'{"cluster": {}}') == {"cluster": {}}

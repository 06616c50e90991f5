"""``simdist explain-input``: the table of who gets what, from the real distribution."""

import doctest

import pytest

from simdist import errors
from simdist.distribute import explain_input as explain_module
from simdist.distribute.explain_input import compress, explain_input, main


def test_docstring_example():
    assert doctest.testmod(explain_module).failed == 0


def test_compress_ranges():
    assert compress([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert compress([]) == "-"
    assert compress([4]) == "4"


def test_data_marks_empty_and_partial_batches():
    ex = explain_input(10, 4, workers=2, devices_per_worker=2, policy="DATA")
    assert ex.by_worker() == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]
    last = [r for r in ex.rows if r.step == 2]
    assert [(r.worker, r.replica, r.elements, r.note) for r in last] == [
        (0, 0, (8,), ""),
        (0, 1, (), "empty"),
        (1, 0, (9,), ""),
        (1, 1, (), "empty"),
    ]
    text = ex.format()
    assert "policy DATA (applied: DATA)" in text and "empty" in text
    assert "worker 1: 5 elements 1,3,5,7,9" in text


def test_files_under_auto_are_sharded_by_file():
    ex = explain_input(file_sizes=[3, 5, 2], global_batch_size=4, workers=2)
    assert ex.by_worker() == [[0, 1, 2, 8, 9], [3, 4, 5, 6, 7]]
    assert "applied: FILE" in ex.title
    listed = explain_input(
        file_sizes=[3, 5, 2],
        global_batch_size=4,
        workers=2,
        list_files_reader=True,
        shuffle_files=True,
        seed=1,
    )
    assert sorted(listed.by_worker()[0]) == [0, 1, 2, 8, 9]


def test_off_duplicates_and_shuffle_keeps_a_partition():
    ex = explain_input(7, 7, workers=2, devices_per_worker=2, policy="OFF")
    assert ex.by_worker() == [list(range(7)), list(range(7))]
    shuffled = explain_input(12, 4, workers=3, policy="DATA", shuffle=12, seed=3)
    assert sorted(x for w in shuffled.by_worker() for x in w) == list(range(12))


def test_errors_are_tfs():
    with pytest.raises(errors.InvalidArgumentError, match="only has 1 file"):
        explain_input(file_sizes=[2, 2], global_batch_size=2, workers=3)
    with pytest.raises(errors.NotFoundError, match="RangeDataset"):
        explain_input(5, 2, workers=2, policy="FILE")
    with pytest.raises(ValueError, match="Unknown policy"):
        explain_input(5, 2, policy="SOMETIMES")
    with pytest.raises(ValueError, match="one of them"):
        explain_input(global_batch_size=2)


def test_main_prints_table_and_reports_errors(capsys):
    assert main(["--elements", "6", "--batch", "4", "--workers", "2", "--policy", "DATA"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split() == ["step", "worker", "replica", "elements", "size", "note"]
    assert main(["--files", "1,1", "--batch", "2", "--workers", "3"]) == 1
    assert "InvalidArgumentError" in capsys.readouterr().err

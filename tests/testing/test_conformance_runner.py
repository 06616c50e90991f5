"""The conformance runner: table, exit codes, JUnit XML, known differences, adapter loading.

(Named test_conformance_runner.py: tests/distribute/test_runner.py already takes the module
name test_runner in this rootdir-imported test tree.)
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from simdist.testing import adapters as adapters_module
from simdist.testing.adapters import Adapter, available, load_adapter
from simdist.testing.adapters.base import Unsupported
from simdist.testing.known_differences import KnownDifference
from simdist.testing.properties import CATALOGUE, select
from simdist.testing.runner import (
    FAIL,
    PASS,
    SKIP,
    XFAIL,
    XPASS,
    exit_code,
    format_table,
    junit_xml,
    main,
    run,
    run_property,
)


def test_a_passing_run_prints_a_table_and_exits_zero(capsys):
    assert main(["--impl", "reference", "--properties", "reduce.*", "--max-examples", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "simdist conformance: reference, up to 4 replicas"
    assert out.splitlines()[1].split() == ["property", "result", "time", "detail"]
    rows = [line for line in out.splitlines() if line.startswith("reduce.")]
    assert len(rows) == len(select("reduce.*")) and all(" PASS " in r for r in rows)
    assert out.splitlines()[-1] == f"{len(rows)} pass"


def test_a_failing_run_shows_the_counterexample_writes_junit_and_exits_one(tmp_path, capsys):
    junit = tmp_path / "out.xml"
    code = main(
        [
            "--impl",
            "broken.all_reduce_drops_replica",
            "--properties",
            "all_reduce.sum,reduce.sum.axis_none",
            "--junit",
            str(junit),
            "--max-examples",
            "20",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "all_reduce.sum        FAIL" in out and "reduce.sum.axis_none  PASS" in out
    # the shrunk example (derandomized: the seed follows the runner's source)
    assert "counterexample: {op: 'SUM', values: [float32(1.0)]}" in out
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and suite.get("name") == (
        "simdist.conformance.broken.all_reduce_drops_replica"
    )
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "0")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["all_reduce.sum"].find("failure")
    assert failure is not None and "counterexample: {op: 'SUM'" in failure.text
    assert cases["reduce.sum.axis_none"].find("failure") is None


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--impl", "nonesuch"], "unknown implementation 'nonesuch'"),
        (["--properties", "nothing.*"], "no property matches 'nothing.*'"),
        (["--replicas", "0"], "argument --replicas: must be an integer in [1, 64], got '0'"),
        (["--max-examples", "-1"], "argument --max-examples: must be an integer"),
        (["--workers", "0"], "argument --workers: must be an integer in [1, 16]"),
    ],
)
def test_usage_errors_exit_two(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_list_prints_the_selected_properties(capsys):
    assert main(["--list", "--properties", "input.split.*"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["input.split.auto", "input.split.off"]


class OnlyReduce(Adapter):
    name = "only-reduce"

    def reduce(self, op, per_replica, axis):
        return load_adapter("reference").reduce(op, per_replica, axis)


def test_properties_needing_missing_operations_skip():
    outcomes = run(OnlyReduce(), "reduce.sum.axis_none,all_reduce.sum", max_examples=3)
    status = {o.property.id: (o.status, o.message) for o in outcomes}
    assert status["reduce.sum.axis_none"] == (PASS, "")
    assert status["all_reduce.sum"] == (SKIP, "only-reduce does not implement all_reduce")
    assert exit_code(outcomes) == 0
    assert "1 pass, 1 skip" in format_table(outcomes)
    suite = ET.fromstring(junit_xml(outcomes, "only-reduce"))
    assert suite.get("skipped") == "1"


def test_known_differences_turn_failures_into_xfail_and_flag_stale_records():
    records = (
        KnownDifference("broken.all_reduce_drops_replica", "all_reduce.sum", "planted bug"),
        KnownDifference("broken.all_reduce_drops_replica", "reduce.sum.axis_none", "stale"),
    )
    adapter = load_adapter("broken.all_reduce_drops_replica")
    outcomes = run(adapter, "all_reduce.sum,reduce.sum.axis_none", 10, records=records)
    status = {o.property.id: o for o in outcomes}
    assert status["all_reduce.sum"].status == XFAIL
    assert status["all_reduce.sum"].message.startswith("known difference: planted bug")
    assert status["reduce.sum.axis_none"].status == XPASS
    assert exit_code(outcomes) == 0


class CrashesOnEmpty(OnlyReduce):
    name = "crashes-on-empty"

    def reduce(self, op, per_replica, axis):
        if any(np.asarray(v).size == 0 for v in per_replica):
            raise Unsupported("would segfault")
        return super().reduce(op, per_replica, axis)


def test_unsupported_inputs_are_discarded_and_reported():
    outcome = run_property(CATALOGUE["reduce.sum.along_axis"], CrashesOnEmpty(), 15)
    assert outcome.status == PASS and "input(s) not run: would segfault" in outcome.message


@pytest.mark.slow
def test_a_failure_that_is_not_a_violation_is_reported_with_its_class():
    class Raises(OnlyReduce):
        def reduce(self, op, per_replica, axis):
            raise RuntimeError("boom")

    outcome = run_property(CATALOGUE["reduce.sum.axis_none"], Raises(), 5)
    assert outcome.status == FAIL and outcome.message == "RuntimeError: boom"


def test_adapters_load_by_name_by_module_path_and_by_entry_point(monkeypatch):
    assert {"simdist", "reference", "tensorflow"} <= set(available())
    assert load_adapter("reference", 3).max_replicas == 3
    path = "simdist.testing.adapters.reference_adapter:ReferenceAdapter"
    assert load_adapter(path).name == "reference"
    point = importlib.metadata.EntryPoint(
        name="toy",
        value="simdist.testing.adapters.reference_adapter:ReferenceAdapter",
        group="simdist.adapters",
    )
    monkeypatch.setattr(
        adapters_module.metadata,
        "entry_points",
        lambda group: [point] if group == "simdist.adapters" else [],
    )
    assert "toy" in available() and load_adapter("toy").name == "reference"
    with pytest.raises(TypeError, match="not a simdist.testing.adapters.Adapter"):
        load_adapter("builtins:str")


def test_adapter_replica_counts_are_checked():
    with pytest.raises(ValueError, match="at least 1"):
        Adapter(0)
    with pytest.raises(ValueError, match="unknown operation"):
        Adapter().supports("reduce_everything")


PLUGIN_TESTS = """
import simdist


def test_strategy(strategy):
    assert strategy.num_replicas_in_sync in (1, 4)


def test_catalogue(conformance_property, run_conformance):
    run_conformance(conformance_property)
"""


@pytest.mark.slow
def test_the_pytest_plugin_parametrizes_strategies_and_properties(tmp_path):
    (tmp_path / "test_user.py").write_text(textwrap.dedent(PLUGIN_TESTS))
    registered = any(
        ep.value == "simdist.testing.plugin"
        for ep in importlib.metadata.entry_points(group="pytest11")
    )
    plugin = [] if registered else ["-p", "simdist.testing.plugin"]
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        *plugin,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--simdist-impl=simdist",
        "--simdist-properties=reduce.sum.*",
        "--simdist-max-examples=3",
        "-v",
        str(tmp_path / "test_user.py"),
    ]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in (
        "test_strategy[mirrored]",
        "test_strategy[one_device]",
        "test_strategy[central_storage]",
        "test_strategy[default]",
        "test_catalogue[reduce.sum.axis_none]",
        "test_catalogue[reduce.sum.along_axis]",
    ):
        assert f"{name} PASSED" in result.stdout, result.stdout


def test_the_conformance_subcommand_mounts_on_an_argparse_command(capsys):
    import argparse

    from simdist.testing.cli import add_parser

    parser = argparse.ArgumentParser(prog="simdist")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(
        ["conformance", "--impl", "reference", "--properties", "gather.*", "--max-examples", "2"]
    )
    assert args.handler(args) == 0
    assert "gather.inverts_split" in capsys.readouterr().out


@pytest.mark.slow
def test_the_command_and_the_plugin_load_without_hypothesis_or_tensorflow():
    code = (
        "import sys, simdist.testing, simdist.testing.cli, simdist.testing.plugin\n"
        "assert 'hypothesis' not in sys.modules and 'tensorflow' not in sys.modules\n"
        "print(simdist.testing.load_adapter('reference').name)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == "reference\n", result.stderr

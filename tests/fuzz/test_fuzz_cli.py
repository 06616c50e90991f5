"""Fuzz the ``simdist`` command in-process: every flag of every subcommand, bad values.

Every option is found by walking the parser, so a new flag without bad values here fails
``test_every_flag_is_fuzzed``. A bad value must give exit status 2 and a message naming the
flag (argparse's ``argument --flag: ...`` or the command's own line), never a traceback or a
run; valid small runs give status 0 and an output that adds up.
"""

import argparse
import contextlib
import io
import os
import re
import tempfile

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from simdist import cli
from tests.fuzz.contract import budget

INT_BAD = ["-1", "nan", "inf", "-inf", "", "x", "2.5", "1e30", "99999999999999999999999"]
POSITIVE_BAD = ["0", *INT_BAD]
SIZE_BAD = ["", "-8", "nan", "inf", "1e30", "8X", "0x10"]
CONFIG = '{"cluster": {"worker": ["a:1"]}}'

# where a command is cheap and valid: bad values are appended to (or put before) these
BASES = {
    ("demo",): ["--train-size", "8", "--test-size", "8", "--epochs", "1", "--trace", ""],
    ("explain-input",): ["--elements", "4", "--batch", "2"],
    ("launch",): ["{script}"],
    ("sensitivity",): ["{script}"],  # trains no step: exit 2 even if a bad value got through
    ("check-step",): ["{script}"],  # trains no step: exit 2 as well
    ("check-cluster",): [CONFIG],
    ("cost", "step"): ["--devices", "1"],
    ("topology", "show"): ["dgx-h100"],
    ("topology", "list"): [],
    ("conformance",): ["--properties", "reduce.sum.axis_none", "--max-examples", "1"],
}
for _name in ("allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall"):
    BASES[("cost", _name)] = ["-b", "8", "-e", "8"]

_COST_COLLECTIVE = {
    "--topology": ["", "bogus", "{missing}", "{folder}.json", "{garbage}", "h100-cluster:0"],
    "--algo": ["", "bogus"],
    "--proto": ["", "LL9"],
    "-b": SIZE_BAD,
    "-e": SIZE_BAD,
    "-i": [*SIZE_BAD, "0"],
    "-f": ["1", "0", "-2", "nan", "", "x"],
    "-d": ["", "bogus"],
    "-o": ["", "bogus"],
    "-r": ["-1", "x", "", "99"],
    "-g": ["0", "-1", "x", "99"],
}
BAD = {
    ("demo",): {
        "--epochs": POSITIVE_BAD,
        "--train-size": [*POSITIVE_BAD, "1000000"],
        "--test-size": [*POSITIVE_BAD, "1000000"],
        "--batch-size-per-replica": POSITIVE_BAD,
        "--seed": [*INT_BAD, "4294967296"],
        "--trace": ["{missing_folder}/t.json", "{folder}"],
    },
    ("explain-input",): {
        "--elements": [*INT_BAD, "1e7"],
        "--files": ["", "3,-1", "3,x", ",", "100000000", "nan"],
        "--batch": POSITIVE_BAD,
        "--workers": [*POSITIVE_BAD, "100000"],
        "--devices-per-worker": [*POSITIVE_BAD, "100000"],
        "--policy": ["", "bogus", "0"],
        "--shuffle": POSITIVE_BAD,
        "--seed": ["nan", "inf", "", "x", "2.5", "1e30"],
    },
    ("launch",): {
        "--workers": [*POSITIVE_BAD, "100000"],
        "--devices-per-worker": [*INT_BAD, "100000"],
        "script": ["{missing}", "{folder}", "{garbage}", ""],
    },
    ("sensitivity",): {
        "--replicas": [*POSITIVE_BAD, "100000"],
        "--workers": [*POSITIVE_BAD, "100000"],
        "--steps": [*POSITIVE_BAD, "10000000"],
        "--algorithms": ["", "bogus", ","],
        "--rtol": ["-1", "nan", "inf", "", "x"],
        "--atol": ["-1", "nan", "inf", "", "x"],
        "--plot": ["{missing_folder}/p.png", "{folder}"],
        "script": ["{missing}", "{folder}", "{garbage}", ""],
    },
    ("check-step",): {
        "--replicas": [*POSITIVE_BAD, "100000"],
        "--steps": [*POSITIVE_BAD, "10000000"],
        "--strategy": ["", "bogus"],
        "--workers": [*POSITIVE_BAD, "100000"],
        "script": ["{missing}", "{folder}", "{garbage}", ""],
    },
    ("check-cluster",): {
        "config": ["{missing}", "{folder}", "{garbage}", "[1, 2]", '{"cluster": 3}', "{"],
        "--devices-per-worker": [*INT_BAD, "100000"],
        "--timeout": ["0", "-1", "nan", "inf", "", "x", "1e30"],
        "--task": ["", "worker:9", "x", "chief:0"],
    },
    ("cost", "step"): {
        "--model": ["", "bogus"],
        "--input-shape": ["", "0", "x", "2,-1", "2.5"],
        "--topology": ["", "bogus", "{missing}", "{garbage}", "h100-cluster:100000"],
        "--batch-per-device": POSITIVE_BAD,
        "--devices": ["", "0", "x", "1,-1", "100000"],
        "--algo": ["", "bogus"],
        "--bucket": [*SIZE_BAD, "0"],
        "--dtype": ["", "bogus"],
        "--optimizer": ["", "bogus"],
        "--launch-overhead-us": ["-1", "nan", "inf", "", "x", "1e300"],
        "--framework-overhead-us": ["-1", "nan", "inf", "", "x", "1e300"],
        "--trace": ["{missing_folder}/t.json", "{folder}"],
    },
    ("topology", "show"): {
        "name": ["", "bogus", "{missing}", "{folder}.json", "{garbage}", "h100-cluster:100000"],
    },
    ("topology", "list"): {},
    ("conformance",): {
        "--impl": ["", "bogus", "broken.nonesuch", "no.such.module:X"],
        "--replicas": [*POSITIVE_BAD, "100000"],
        "--workers": [*POSITIVE_BAD, "100000"],
        "--properties": ["", "nomatch*"],
        "--junit": ["{missing_folder}/j.xml", "{folder}"],
        "--max-examples": [*POSITIVE_BAD, "10000000000"],
    },
}
for _name in ("allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall"):
    BAD[("cost", _name)] = dict(_COST_COLLECTIVE)
# the commands that run a script: their options come before it
SCRIPT_COMMANDS = (("launch",), ("sensitivity",), ("check-step",))
# options that take no value, and the script's own arguments (anything is theirs)
NO_VALUE = {"args"}


def _subparsers(parser):
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def walk(parser=None, path=()):
    """(command path, option or positional name) for every value-taking argument."""
    parser = parser or cli.build_parser()
    found = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += walk(sub, (*path, name))
            continue
        if action.nargs == 0 or action.dest in NO_VALUE:
            continue
        name = action.option_strings[0] if action.option_strings else action.dest
        found.append((path, name))
    return found


FLAGS = walk()


def test_every_flag_is_fuzzed():
    missing = [(p, f) for p, f in FLAGS if f not in BAD.get(p, {})]
    assert not missing, f"give these flags bad values in BAD: {missing}"
    assert {p for p, _ in FLAGS} <= set(BASES)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    (root / "folder").mkdir()
    (root / "folder.json").mkdir()
    (root / "garbage.json").write_bytes(b"\x00\xff\xfe garbage")
    (root / "script.py").write_text("x = 1\n")
    return {
        "missing": str(root / "missing.json"),
        "missing_folder": str(root / "missing"),
        "folder": str(root / "folder"),
        "garbage": str(root / "garbage.json"),
        "script": str(root / "script.py"),
    }


def run_cli(argv):
    """(status, stdout, stderr) of ``simdist ARGV``, run in an empty temporary folder: a
    random --trace value that happens to be a valid name writes its file there."""
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _fill(text, files):
    for key, where in files.items():
        text = text.replace("{" + key + "}", where)
    return text


def _argv(path, flag, value, files):
    base = [_fill(b, files) for b in BASES[path]]
    value = _fill(value, files)
    if flag.startswith("-"):
        given = [flag, value]
        if path in SCRIPT_COMMANDS:  # options first: what follows the script is its own
            return [*path, *given, *base]
        return [*path, *base, *given]
    # a positional: it replaces the base's positional (the only one of each command)
    keep = [b for b in base if b.startswith("-") or base.index(b) % 2]
    if path in (*SCRIPT_COMMANDS, ("check-cluster",), ("topology", "show")):
        keep = []
    return [*path, *keep, value]


_LONG = {"-b": "--minbytes", "-e": "--maxbytes", "-i": "--stepbytes", "-f": "--stepfactor",
         "-d": "--datatype", "-o": "--op", "-r": "--root", "-g": "--ngpus"}  # fmt: skip


def _names_the_flag(err, path, flag):
    """The message names the flag (its long form for a short one), or for a positional
    the thing it is (the script, the config, the topology name)."""
    if flag.startswith("-"):
        return re.search(re.escape(_LONG.get(flag, flag)) + r"\b", err) is not None
    words = {"script": ["argument script"], "config": ["config", "cluster", "TF_CONFIG"]}
    words["name"] = ["topology", "file", "JSON"]
    return any(w in err for w in words[flag])


CASES = [(p, f, v) for p, f in FLAGS for v in BAD.get(p, {}).get(f, [])]


@budget(90)
@given(case=st.sampled_from(CASES))
@example(case=(("launch",), "script", "{missing}"))
@example(case=(("check-cluster",), "--timeout", "-1"))
@example(case=(("check-cluster",), "config", "{missing}"))
@example(case=(("explain-input",), "--elements", "-5"))
@example(case=(("explain-input",), "--elements", "1e7"))
@example(case=(("explain-input",), "--batch", "0"))
@example(case=(("cost", "step"), "--trace", "{folder}"))
@example(case=(("conformance",), "--junit", "{missing_folder}/j.xml"))
def test_bad_values_exit_two_naming_the_flag(case, files):
    path, flag, value = case
    argv = _argv(path, flag, value, files)
    code, out, err = run_cli(argv)
    assert code == 2, f"{argv}: exit {code}\n{out[-300:]}\n{err[-300:]}"
    assert "Traceback" not in err, err
    assert _names_the_flag(err, path, flag), f"{argv}: {err!r} does not name {flag}"


@budget(30)
@given(flag=st.sampled_from(FLAGS), text=st.text(max_size=12))
def test_random_text_never_tracebacks(flag, text, files):
    path, name = flag
    if path in (("demo",), ("conformance",), *SCRIPT_COMMANDS) and not text.strip():
        return  # an empty --trace / --junit '' skips the file: a real (small) run
    if name in ("--trace", "--plot", "--junit"):  # a valid name is written: keep it in the
        text = "./" + text.lstrip("/")  # temporary folder run_cli works in, never at /
    argv = _argv(path, name, text, files)
    if path == ("conformance",):
        argv.append("--list")  # a valid value would run the catalogue's own hypothesis tests
    code, _, err = run_cli(argv)
    assert "Traceback" not in err, err
    assert code in (0, 1, 2), (argv, code, err)


@budget(25)
@given(
    elements=st.integers(0, 40),
    batch=st.integers(1, 9),
    workers=st.integers(1, 3),
    devices=st.integers(1, 3),
    drop=st.booleans(),
)
@example(elements=0, batch=1, workers=1, devices=1, drop=False)
def test_valid_explain_input_accounts_for_every_element(elements, batch, workers, devices, drop):
    argv = ["explain-input", "--elements", str(elements), "--batch", str(batch)]
    argv += ["--workers", str(workers), "--devices-per-worker", str(devices), "--policy", "DATA"]
    argv += ["--drop-remainder"] if drop else []
    code, out, err = run_cli(argv)
    assert code == 0, err
    counts = [int(m) for m in re.findall(r"^worker \d+: (\d+) elements", out, re.M)]
    assert len(counts) == workers
    # DATA sharding: each worker takes every workers-th batch; nothing is lost or doubled
    if not drop:
        assert sum(counts) == elements
    else:
        assert sum(counts) <= elements


def test_help_and_version_exit_zero():
    for argv in (["--help"], ["--version"], ["cost", "--help"], ["explain-input", "--help"]):
        code, out, _ = run_cli(argv)
        assert code == 0 and out
    assert run_cli([])[0] == 2
    assert run_cli(["no-such-command"])[0] == 2


def test_launch_runs_a_real_script(files, tmp_path):
    script = tmp_path / "echo.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\n")
    code, out, err = run_cli(["launch", "--workers", "2", str(script), "--lr", "-5"])
    assert code == 0, err
    assert out.count("args ['--lr', '-5']") == 2  # the script's own flags are its own
    assert os.path.exists(script)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["launch", "{missing}"], "argument script: no such file"),
        (["launch", "{folder}"], "is a directory; name a file"),
        (["launch", "{garbage}"], "is not a Python script"),
        (["check-cluster", "--timeout", "-1", CONFIG], "argument --timeout: must be a finite"),
        (["check-cluster", "{missing}"], "config: no such file"),
        (["check-cluster", "{garbage}"], "is not UTF-8 text"),
        (["explain-input", "--elements", "-5", "--batch", "2"], "argument --elements: must be"),
        (["explain-input", "--elements", "1e7", "--batch", "2"], "pass --no-size-limit"),
        (["explain-input", "--elements", "10", "--batch", "0"], "argument --batch: must be"),
    ],
)
def test_the_issue_items(argv, message, files):
    code, _, err = run_cli([_fill(a, files) for a in argv])
    assert code == 2 and message in err and "Traceback" not in err, err
    assert "JSON" not in err or "config" not in argv  # a missing file is not a JSON problem


def test_demo_with_fewer_examples_than_replicas():
    # found by the fuzz: replicas with an empty share of the batch failed in MaxPooling2D
    # (IndexError) and Flatten (reshape of an empty batch to [0, -1])
    code, out, err = run_cli(["demo", "--train-size", "1", "--test-size", "1", "--epochs", "1"])
    assert code == 0, err
    assert "Epoch 1" in out

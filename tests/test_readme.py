"""The README is a front door whose code runs as written."""

import os
import pathlib
import re
import shlex

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

SETUP = (
    "python3 -m pip install . && simdist demo",
    "python3 -m pip install -e '.[test,mpich,tensorflow,plot]' && "
    "python3 -m pytest -n auto --tensorflow",
)


def _blocks(language: str, text: str | None = None) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text or README.read_text(), re.S)


def _run(code: str, name: str) -> None:
    exec(compile(code, name, "exec"), {"__name__": "readme"})


def test_quickstart_runs(capsys):
    text = README.read_text()
    section = text[text.index("## Quickstart") : text.index("### Several workers")]
    (code,) = _blocks("python", section)
    _run(code, "README quickstart")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "4"
    assert all(line.startswith("tf.Tensor(") for line in out[1:])


def test_the_multi_worker_example_prints_what_its_comments_say(capsys):
    text = README.read_text()
    section = text[text.index("### Several workers") : text.index("### What a step costs")]
    (code,) = _blocks("python", section)
    _run(code, "README multi-worker")
    assert capsys.readouterr().out.splitlines() == ["[7.0, 7.0]", "WorkerFailedError"]


def test_the_cost_example_reports_and_writes_a_trace(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = README.read_text()
    section = text[text.index("### What a step costs") : text.index("## What works")]
    (code,) = _blocks("python", section)
    _run(code, "README cost")
    out = capsys.readouterr().out
    assert "simdist profile on dgx-h100" in out and "bottleneck link" in out
    assert (tmp_path / "step.trace.json").stat().st_size > 0


def test_every_python_block_is_one_of_the_tested_ones():
    assert len(_blocks("python")) == 3


def test_the_two_set_up_commands_are_there_exactly():
    blocks = [b.strip() for b in _blocks("sh")]
    for command in SETUP:
        assert command in blocks


def test_readme_names_the_test_command_that_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == SETUP[1]


DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize(
    "line",
    [
        line.split("  #")[0].strip()
        for doc in DOCS
        for block in _blocks("sh", doc.read_text())
        for line in block.splitlines()
        if line.startswith("simdist ")
    ],
)
def test_every_simdist_command_in_the_readme_and_docs_parses(line, tmp_path, monkeypatch):
    from simdist.cli import build_parser

    # scripts are checked when the command line is parsed: give the examples' scripts
    monkeypatch.chdir(tmp_path)
    for word in shlex.split(line):
        if word.endswith(".py") and not os.path.isabs(word) and "/" not in word:
            (tmp_path / word).write_text("x = 1\n")
    build_parser().parse_args(shlex.split(line)[1:])


def test_a_front_door_not_a_notebook():
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    assert not re.search(r"\bissue \d", text, re.I), "issue numbers belong in CHANGELOG.md"
    assert not re.search(r"\bseeds?\b'?s? (cnn|tutorial|model|code)|main job", text, re.I)
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to a missing {target}"

"""The README's quickstart runs as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_quickstart_runs(capsys):
    text = README.read_text()
    section = text[text.index("## Quickstart") : text.index("## Status")]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README quickstart", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "4"
    assert all(line.startswith("tf.Tensor(") for line in out[1:])


def test_readme_names_the_test_command_that_ci_runs():
    ci = (README.parent / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in README.read_text()

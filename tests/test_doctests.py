"""Every docstring example in simdist/ is a test: pytest runs them (--doctest-modules)."""

import doctest
import importlib
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml on 3.10 needs tomli")


def test_the_suite_collects_simdist_with_doctest_modules():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "simdist" in options["testpaths"]
    assert "--doctest-modules" in options["addopts"].split()


def _modules_with_examples():
    for path in sorted((ROOT / "simdist").rglob("*.py")):
        prompts = sum(line.lstrip().startswith(">>> ") for line in path.read_text().splitlines())
        if prompts:
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), prompts


@pytest.mark.parametrize(("name", "prompts"), list(_modules_with_examples()))
def test_every_prompt_is_in_a_docstring_doctest_finds(name, prompts):
    module = importlib.import_module(name)
    found = doctest.DocTestFinder().find(module, name)
    examples = sum(len(test.examples) for test in found)
    assert examples == prompts, (
        f"{name}: {prompts} '>>> ' lines but doctest finds {examples} examples: an example "
        "outside a docstring (or in one of an object the module only imports) never runs"
    )

"""The distribution ships every package, and reference/ stays independent of simdist."""

import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml on 3.10 needs tomli")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "simdist").rglob("__init__.py")
    }
    found.add("simdist_reference")
    assert found == listed, f"missing: {sorted(found - listed)}, stale: {sorted(listed - found)}"


def test_runtime_dependencies_are_numpy_and_threadpoolctl():
    # threadpoolctl holds NumPy's BLAS to one thread (simdist.core.blas_threads): the bits
    # then do not depend on the core count, and BLAS workers do not spin on a busy machine.
    deps = _pyproject()["project"]["dependencies"]
    assert [d.split(">")[0].split("=")[0].strip() for d in deps] == ["numpy", "threadpoolctl"]


def test_reference_imports_numpy_only():
    allowed = {
        "numpy",
        "__future__",
        "dataclasses",
        "enum",
        "itertools",
        "math",
        "typing",
        "collections",
        "functools",
        "json",
        "fnmatch",
        "simdist_reference",
    }
    for path in (ROOT / "reference").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_import_simdist_needs_numpy_alone():
    import subprocess

    code = (
        "import sys, simdist;"
        "bad = [m for m in ('hypothesis', 'mpi4py', 'tensorflow', 'pytest') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_version_has_one_source():
    project = _pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    attr = _pyproject()["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "simdist.version.__version__"
    import simdist

    assert isinstance(simdist.__version__, str) and simdist.__version__.count(".") == 2


def test_repository_tracks_no_binary_or_large_file():
    import subprocess

    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    for name in filter(None, out.decode().split("\0")):
        path = ROOT / name
        if not path.is_file():
            continue
        assert not name.endswith((".whl", ".so", ".tar.gz", ".zip")), f"{name} is a binary"
        assert path.stat().st_size < 1_000_000, f"{name} is over 1 MB"

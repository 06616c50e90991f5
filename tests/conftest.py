"""Shared test settings: hypothesis profiles (deterministic in CI), fresh Keras names per test."""

import os

import pytest
from hypothesis import HealthCheck, settings

# --doctest-modules (for simdist/'s docstrings) would import every file here as a module: not
# the programs the MPI tests spawn under mpiexec, nor the conftest files (pytest loads those).
collect_ignore_glob = ["backends/mpi_scripts/*", "conftest.py", "*/conftest.py"]

settings.register_profile(
    "ci",
    derandomize=True,  # the same examples on every run: a red CI is reproducible
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, max_examples=40)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def fresh_keras_names():
    """Every test starts with Keras's name counters at zero (``dense``, not ``dense_7``), so
    asserted layer and variable names do not depend on which tests ran before on a worker."""
    from simdist.keras import backend

    backend.clear_session()
    yield


@pytest.fixture
def simdist_env(monkeypatch):
    """``simdist_env(NAME, value)``: set a ``SIMDIST_*`` variable and re-read simdist's settings
    (read once per process, :mod:`simdist.settings`); both are restored after the test."""
    from simdist import settings as simdist_settings

    def set_env(name: str, value: str | None):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
        return simdist_settings.reload()

    yield set_env
    monkeypatch.undo()
    simdist_settings.reload()

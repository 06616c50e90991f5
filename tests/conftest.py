"""Shared test settings: hypothesis profiles (deterministic in CI), fresh Keras names per test."""

import importlib.util
import os
import shutil
import sys
import tempfile

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
# The fuzz suite (tests/fuzz/) draws a few examples per test in CI; this profile draws many
# (HYPOTHESIS_PROFILE=fuzz-long python -m pytest tests/fuzz), see tests/fuzz/contract.py.
settings.register_profile(
    "fuzz-long",
    deadline=None,
    max_examples=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# --- the TensorFlow tier --------------------------------------------------------------------
# Tests marked `tensorflow` run real TensorFlow (differential tests of the public surface,
# TF's own multi-worker cluster, TensorBoard reading our files). They cost more than half of the
# suite's CPU (a TF process starts in ~6 s of CPU), so a plain `pytest` leaves them out and
# says so; `--tensorflow` (the README's test command, and so CI) runs them too, and refuses
# to start when TensorFlow is not installed: that tier can never pass by being skipped.
def pytest_addoption(parser):
    parser.addoption(
        "--tensorflow",
        action="store_true",
        help="also run the tests against real TensorFlow (marker `tensorflow`; needs the "
        "tensorflow extra). CI runs them.",
    )


def pytest_configure(config):
    if config.getoption("--tensorflow") and importlib.util.find_spec("tensorflow") is None:
        raise pytest.UsageError(
            "--tensorflow runs the tests against real TensorFlow, which is not installed: "
            "python3 -m pip install -e '.[tensorflow]'"
        )
    _keep_bytecode(config)
    _blas_threads_from_the_start()
    # TensorFlow (the `tensorflow` tier, here and in the processes it starts) turns its oneDNN
    # kernels on by itself only on CPUs with AVX-512 VNNI or newer; without them its CPU
    # convolutions refuse NCHW, and the differential tests would pass or fail by the CPU (an
    # AVX2-only VM failed three). On for every CPU, as on the ones where it is the default.
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


# --- how xdist shares the tests out ---------------------------------------------------------------
# `-n` without `--dist` makes xdist deal the tests out in file order in shrinking chunks
# ("load"). The costly tests sit together (the conformance catalogue, the process tests), and
# the last chunks left one worker running 10-15 s after the other was done. Work stealing (a
# worker out of tests takes half of another's queue) ends the two within a test of each other.
# An explicit `--dist` is obeyed.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    asked = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    if config.option.dist != "load" or any(str(a).startswith("--dist") for a in asked):
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


# --- BLAS threads from the start ---------------------------------------------------------------
# Every process of the suite (the xdist workers, and what they start: MPI ranks, TF_CONFIG tasks,
# scenarios, the CLI) runs simdist, whose policy holds NumPy's BLAS to one thread at import. By
# then OpenBLAS has started its threads and let them spin: ~0.12 s of CPU per process, ~20 s of
# the default tier. Exporting the policy's thread count first (where the shell has not chosen
# one) gives every process the same one thread from the start, and the same bits.
def _blas_threads_from_the_start():
    from simdist.backends import process_env

    os.environ.update(process_env.with_blas_threads(os.environ))


# --- bytecode under PYTHONDONTWRITEBYTECODE ---------------------------------------------------
# The suite starts about a hundred Python processes (MPI ranks, TF_CONFIG tasks, scenarios, the
# CLI), each importing simdist. Where the shell exports PYTHONDONTWRITEBYTECODE=1 (containers
# often do) no .pyc is ever written, so every one of them compiled simdist from source (~0.5 s
# of CPU each) and each xdist worker compiled and assertion-rewrote every test file (~5 s).
# The default tier then keeps its bytecode in pytest's own cache folder (.pytest_cache/d/pycache,
# through PYTHONPYCACHEPREFIX), never beside the sources; without the cache plugin
# (-p no:cacheprovider), in a folder of this run that is removed at its end. Python checks each
# .pyc against its source's mtime and size, as always.
def _keep_bytecode(config):
    if not sys.dont_write_bytecode or os.environ.get("PYTHONPYCACHEPREFIX"):
        return  # bytecode is written already, or its place chosen by the shell
    if config.getoption("--tensorflow"):
        # A prefix hides site-packages' own __pycache__: TensorFlow (~70 MB of bytecode) would
        # be compiled again, 14 s more for each TF process of the first run.
        return
    cache = getattr(config, "cache", None)
    if cache is not None:
        folder = str(cache.mkdir("pycache"))
    else:
        folder = tempfile.mkdtemp(prefix="simdist-pycache-")
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    sys.pycache_prefix = folder
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = folder  # xdist workers and every child process
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_collection_modifyitems(config, items):
    if config.getoption("--tensorflow"):
        return
    kept, left_out = [], []
    for item in items:
        (left_out if item.get_closest_marker("tensorflow") else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
    config._simdist_tf_left_out = len(left_out)


def pytest_terminal_summary(terminalreporter, config):
    if config.getoption("--tensorflow"):
        return
    left_out = getattr(config, "_simdist_tf_left_out", None)  # unknown here under xdist
    if left_out == 0:
        return
    what = f"{left_out} tests" if left_out else "The tests"
    terminalreporter.write_line(
        f"{what} against real TensorFlow (marker `tensorflow`) were not run: add "
        "--tensorflow (the README's test command and CI do)."
    )


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


# --- strategy combinations (TF's strategy_combinations) ------------------------------------
# One named way to make each strategy a test body should hold under. A test that takes the
# `distribution` fixture (one strategy) or `make_distribution` (a factory, for a second fresh
# copy) runs once per combination; `@pytest.mark.strategies("name", ...)` picks a subset,
# `@pytest.mark.strategies(exclude=("default",))` leaves some out.
def _mirrored(devices, cross_device_ops=None):
    import simdist as tf

    ops = None if cross_device_ops is None else getattr(tf.distribute, cross_device_ops)()
    return tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(devices)], ops)


def _central_storage():
    import simdist as tf

    return tf.distribute.experimental.CentralStorageStrategy(["GPU:0", "GPU:1"])


def _one_device():
    import simdist as tf

    return tf.distribute.OneDeviceStrategy("GPU:0")


def _multi_worker_one_worker():
    import simdist as tf

    return tf.distribute.MultiWorkerMirroredStrategy()  # no TF_CONFIG: one worker, its GPUs


def _default():
    import simdist as tf

    return tf.distribute.get_strategy()


STRATEGY_COMBINATIONS = {
    "default": _default,
    "one_device": _one_device,
    "mirrored_one_gpu": lambda: _mirrored(1),
    "mirrored_two_gpus": lambda: _mirrored(2),
    "mirrored_four_gpus": lambda: _mirrored(4),
    "mirrored_two_gpus_hierarchical_copy": lambda: _mirrored(2, "HierarchicalCopyAllReduce"),
    "mirrored_two_gpus_reduction_to_one_device": lambda: _mirrored(2, "ReductionToOneDevice"),
    "central_storage_two_gpus": _central_storage,
    "multi_worker_one_worker": _multi_worker_one_worker,
}


def pytest_generate_tests(metafunc):
    if "strategy_combination" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("strategies")
    names = list(marker.args) if marker and marker.args else list(STRATEGY_COMBINATIONS)
    excluded = list(marker.kwargs.get("exclude", ())) if marker else []
    unknown = [n for n in names + excluded if n not in STRATEGY_COMBINATIONS]
    if unknown:
        raise ValueError(f"unknown strategy combination(s) {unknown}; see tests/conftest.py")
    names = [n for n in names if n not in excluded]
    metafunc.parametrize("strategy_combination", names, indirect=True)


@pytest.fixture
def strategy_combination(request):
    """The combination's name (parametrized by pytest_generate_tests)."""
    return request.param


@pytest.fixture
def make_distribution(strategy_combination):
    """A factory of fresh strategies of this test's combination."""
    return STRATEGY_COMBINATIONS[strategy_combination]


@pytest.fixture
def distribution(make_distribution):
    """One strategy of this test's combination."""
    return make_distribution()

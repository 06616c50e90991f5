"""simdist.settings: one place reads every SIMDIST_* variable, documented in one table."""

import dataclasses
import pathlib
import re

import pytest

import simdist as tf
from simdist import settings
from simdist.sim.launch import launch

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _table() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in (ROOT / "docs" / "settings.md").read_text().splitlines():
        m = re.match(r"\| `(SIMDIST_\w+)` \| `(\w+)` \| `([^`]*)` \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def _shown(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return '""' if value == "" else str(value)


def test_the_docs_table_is_the_dataclass():
    table = _table()
    fields = {f.metadata["env"]: f for f in dataclasses.fields(settings.Settings)}
    assert sorted(table) == sorted(fields)
    for env, field in fields.items():
        assert table[env] == (field.name, _shown(field.default)), env


def test_no_other_module_reads_a_simdist_variable():
    for path in (ROOT / "simdist").rglob("*.py"):
        if path.name == "settings.py" and path.parent.name == "simdist":
            continue
        # a string literal that is exactly a variable's name: os.environ.get("SIMDIST_..."),
        # a constant naming it (docstrings and messages may mention it)
        names = re.findall(r"""["'](SIMDIST_[A-Z_]+)["']""", path.read_text())
        assert not names, f"{path.relative_to(ROOT)} names {names}: use simdist.settings"


@pytest.mark.parametrize(
    ("env", "raw", "message"),
    [
        ("SIMDIST_VIRTUAL_GPUS", "four", "is not an integer"),
        ("SIMDIST_VIRTUAL_GPUS", "-1", "must be >= 0"),
        ("SIMDIST_REPLICA_TIMEOUT", "soon", "must be a number of seconds"),
        ("SIMDIST_WORKER_TIMEOUT", "0", "must be a number of seconds > 0"),
        ("SIMDIST_MPI_NATIVE_ALLREDUCE", "true", "must be 0 or 1"),
    ],
)
def test_a_bad_value_names_the_variable(env, raw, message):
    with pytest.raises(ValueError, match=f"{env}={raw!r} {message}"):
        settings.Settings.from_environ({env: raw})


def test_read_once_then_overridden_then_restored(simdist_env):
    simdist_env("SIMDIST_WORKER_TIMEOUT", "30")
    first = settings.get()
    assert settings.get() is first and first.worker_timeout == 30.0
    with settings.override(worker_timeout=2.5, virtual_gpus=1) as changed:
        assert settings.get() is changed and changed.worker_timeout == 2.5
    assert settings.get() is first
    with pytest.raises(TypeError, match="unknown setting"):
        with settings.override(timeout=1):
            pass
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.worker_timeout = 1.0


def _gpus() -> int:
    return len(tf.config.list_logical_devices("GPU"))


def test_simdist_launch_gives_a_worker_what_an_mpiexec_process_has(simdist_env):
    # Under mpiexec a worker is a plain process: its host has settings.virtual_gpus GPUs.
    simdist_env("SIMDIST_VIRTUAL_GPUS", "3")
    assert tf.distribute.MultiWorkerMirroredStrategy  # the strategy the launchers run
    assert launch(_gpus, workers=2) == [3, 3]
    assert launch(_gpus, workers=2, devices_per_worker=1) == [1, 1]

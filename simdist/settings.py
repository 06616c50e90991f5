"""simdist's process settings: every ``SIMDIST_*`` environment variable, read once, in one place.

:func:`get` reads the environment the first time it is called and keeps the result, a frozen
:class:`Settings`; every module asks it instead of ``os.environ``. A bad value raises
``ValueError`` naming the variable, at that first read. Tests change a setting with
:func:`override` (a context manager) or re-read the environment with :func:`reload`.
``docs/settings.md`` is the table of variables (a test checks it against this file).

>>> Settings.from_environ({}).virtual_gpus
4
>>> Settings.from_environ({"SIMDIST_VIRTUAL_GPUS": "2"}).virtual_gpus
2
>>> with override(worker_timeout=5.0):
...     get().worker_timeout
5.0
>>> Settings.from_environ({"SIMDIST_REPLICA_HANDOVER": "yes"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: SIMDIST_REPLICA_HANDOVER='yes' must be 'same-cpu' (wake the next thread on ...

This module sits at the bottom of the layer graph beside ``errors``: it imports nothing from
simdist, so every layer may read it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import warnings
from collections.abc import Iterator, Mapping

__all__ = ["Settings", "get", "override", "reload", "env_name", "ENV_VARS"]


def _seconds(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} must be a number of seconds.") from None
    if not value > 0:
        raise ValueError(f"{name}={raw!r} must be a number of seconds > 0.")
    return value


def _switch(name: str, raw: str) -> bool:
    if raw not in ("0", "1"):
        raise ValueError(f"{name}={raw!r} must be 0 or 1.")
    return raw == "1"


def _count(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(
            f"{name}={raw!r} is not an integer; set it to a GPU count such as 4."
        ) from None
    if value < 0:
        raise ValueError(f"{name}={raw!r} must be >= 0.")
    return value


def _blas_threads(name: str, raw: str) -> int | None:
    text = raw.strip()
    if text.lower() == "inherit":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(
            f"{name}={raw!r} must be a positive number of BLAS threads or 'inherit' (leave "
            "NumPy's BLAS as its own environment variables set it); unset, simdist uses 1."
        )
    return value


def _one_of(**choices: str):
    """A parser for a variable that takes one of ``choices`` (value -> what it does; the
    first is the default), case-insensitive; the error lists them."""

    def parse(name: str, raw: str) -> str:
        text = raw.strip().lower()
        if text in choices:
            return text
        listed = [f"'{value}' ({meaning})" for value, meaning in choices.items()]
        listed[0] = listed[0][:-1] + ", the default)"
        raise ValueError(f"{name}={raw!r} must be " + " or ".join(listed) + ".")

    return parse


_malloc = _one_of(
    simdist="set glibc's mmap and trim thresholds", inherit="leave the allocator as it is"
)
_blas_buffers = _one_of(
    map="map OpenBLAS's packing buffers with one large product each",
    inherit="leave them to the first products",
)
_replica_handover = _one_of(
    **{
        "same-cpu": "wake the next thread on the CPU of the one handing over",
        "any": "let the OS place it",
    }
)


def _threads_or_auto(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(
            f"{name}={raw!r} must be a number of threads per op (1: every op on the calling "
            "thread alone; 0 or unset: one per CPU this process may use)."
        )
    return value


def _text(name: str, raw: str) -> str:
    del name
    return raw.strip()


def _setting(env: str, default, parse, doc: str):
    return dataclasses.field(default=default, metadata={"env": env, "parse": parse, "doc": doc})


@dataclasses.dataclass(frozen=True)
class Settings:
    """The value of every ``SIMDIST_*`` variable (or its default) for this process."""

    virtual_gpus: int = _setting(
        "SIMDIST_VIRTUAL_GPUS",
        4,
        _count,
        "Virtual GPUs of a simulated host: the one process, each `simdist launch` worker "
        "(unless `--devices-per-worker` says otherwise) and each `mpiexec` process.",
    )
    collective_algo: str = _setting(
        "SIMDIST_COLLECTIVE_ALGO",
        "",
        _text,
        "Force a collective algorithm: one name (`ring`), or `collective=name` pairs "
        "(`all_reduce=tree,all_gather=ring`); empty: chosen by message size and topology.",
    )
    force_all_reduce: str = _setting(
        "SIMDIST_FORCE_ALL_REDUCE",
        "",
        _text,
        "Run every cross-replica all-reduce of every strategy with this algorithm (`ring`, "
        "`double_binary_tree`, `recursive_doubling`, `hierarchical`, ...) or `exact` (the "
        "correctly rounded exact sum), whatever the cross-device op would choose; empty: "
        "each op's own choice. `simdist sensitivity` sets it (docs/reduction-sensitivity.md).",
    )
    replica_timeout: float = _setting(
        "SIMDIST_REPLICA_TIMEOUT",
        600.0,
        _seconds,
        "Seconds a replica may run without reaching a collective before `DeadlineExceededError`.",
    )
    worker_timeout: float = _setting(
        "SIMDIST_WORKER_TIMEOUT",
        600.0,
        _seconds,
        "Seconds a worker of a virtual cluster (or a collective across workers) may take "
        "before `DeadlineExceededError`.",
    )
    replica_handover: str = _setting(
        "SIMDIST_REPLICA_HANDOVER",
        "same-cpu",
        _replica_handover,
        "`same-cpu`: a thread handed the turn of a `strategy.run` (a replica, the caller) "
        "wakes on the CPU of the thread that handed it over, then may run anywhere (cheap "
        "hand-overs; Linux); `any`: the OS places every wake-up. Results are the same bits "
        "(docs/performance.md).",
    )
    blas_threads: int | None = _setting(
        "SIMDIST_BLAS_THREADS",
        1,
        _blas_threads,
        "Threads of NumPy's BLAS, set through threadpoolctl at `import simdist`; `inherit` "
        "leaves them as BLAS's own variables set them (bits then follow the thread count).",
    )
    malloc_policy: str = _setting(
        "SIMDIST_MALLOC",
        "simdist",
        _malloc,
        "`simdist`: at `import simdist`, glibc's mmap threshold 32 MiB and trim threshold 64 "
        "MiB, so large temporaries reuse the heap (docs/performance.md); `inherit`: leave "
        "the allocator alone. No result depends on it.",
    )
    blas_buffers: str = _setting(
        "SIMDIST_BLAS_BUFFERS",
        "map",
        _blas_buffers,
        "`map`: at `import simdist`, and when the intra-op threads start, one float32 "
        "product per OpenBLAS packing buffer maps its first pages, which the prefetches of "
        "small products would otherwise miss on (1.8-2.7x slower; docs/performance.md); "
        "`inherit`: leave the buffers to the first products. No result depends on it.",
    )
    intra_op_threads: int = _setting(
        "SIMDIST_INTRA_OP_THREADS",
        0,
        _threads_or_auto,
        "Threads a convolution or max pooling shares its blocks of images among; `0`: one "
        "per CPU this process may use. Results are the same bits for every count.",
    )
    mpi_native_allreduce: bool = _setting(
        "SIMDIST_MPI_NATIVE_ALLREDUCE",
        False,
        _switch,
        "`1`: under `mpiexec`, all-reduce with MPI's own `Allreduce` (faster, not bit-identical "
        "to the virtual cluster); `0`: simdist's ring, bit-identical.",
    )
    job_key: str = _setting(
        "SIMDIST_JOB_KEY",
        "",
        _text,
        "The secret that authenticates the processes of one TF_CONFIG job to each other (a "
        "launcher sets a random one); empty: a key derived from the TF_CONFIG cluster.",
    )
    mpi_guard_fd: str = _setting(
        "SIMDIST_MPI_GUARD_FD",
        "",
        _text,
        "Set by `python -m simdist.backends.mpi_guard` for the rank it guards: the pipe its "
        "transport reports to. Not for users.",
    )
    tpu: str = _setting(
        "SIMDIST_TPU",
        "v3-8",
        _text,
        "The accelerator type of the TPU attached to this host (`TPUClusterResolver('')` / "
        "`'local'`), e.g. `v4-8`; one host only.",
    )

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings an environment gives (default: ``os.environ``).

        Raises:
            ValueError: a variable whose value does not parse (the message names it).
        """
        environ = os.environ if environ is None else environ
        for name, replacement in RETIRED.items():
            if name in environ:
                warnings.warn(f"{name} is no longer read: {replacement}", stacklevel=2)
        values = {}
        for field in dataclasses.fields(cls):
            raw = environ.get(field.metadata["env"])
            if raw is not None:
                values[field.name] = field.metadata["parse"](field.metadata["env"], raw)
        return cls(**values)


RETIRED: dict[str, str] = {
    "SIMDIST_PIN_REPLICA_THREADS": (
        "a thread handed the turn now wakes on the CPU of the one handing it over, which "
        "gives the cheap hand-overs pinning gave without holding any thread on one CPU "
        "(SIMDIST_REPLICA_HANDOVER, docs/performance.md)."
    ),
}
"""Variables earlier versions read, and what took their place (setting one warns)."""

ENV_VARS: dict[str, str] = {f.metadata["env"]: f.name for f in dataclasses.fields(Settings)}
"""Each environment variable's field of :class:`Settings`."""


def env_name(field: str) -> str:
    """The environment variable of a :class:`Settings` field (for messages that name it).

    >>> env_name("replica_timeout")
    'SIMDIST_REPLICA_TIMEOUT'
    """
    for f in dataclasses.fields(Settings):
        if f.name == field:
            return f.metadata["env"]
    raise KeyError(f"no setting {field!r}")


_lock = threading.Lock()
_current: Settings | None = None


def get() -> Settings:
    """This process's settings, read from the environment on the first call.

    Raises:
        ValueError: a ``SIMDIST_*`` variable with a bad value.
    """
    global _current
    current = _current
    if current is None:
        with _lock:
            if _current is None:
                _current = Settings.from_environ()
            current = _current
    return current


def reload() -> Settings:
    """Read the environment again (for tests that set a variable); returns the new settings."""
    global _current
    fresh = Settings.from_environ()
    with _lock:
        _current = fresh
    return fresh


@contextlib.contextmanager
def override(**changes) -> Iterator[Settings]:
    """Within the block, :func:`get` returns the settings with ``changes`` (field names).

    Raises:
        TypeError: a name that is not a field of :class:`Settings`.
    """
    global _current
    unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(Settings)})
    if unknown:
        raise TypeError(
            f"override() got unknown setting(s) {unknown}; the settings are "
            f"{[f.name for f in dataclasses.fields(Settings)]}."
        )
    before = get()
    changed = dataclasses.replace(before, **changes)
    with _lock:
        _current = changed
    try:
        yield changed
    finally:
        with _lock:
            _current = before

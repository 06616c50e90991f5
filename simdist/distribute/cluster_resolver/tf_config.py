"""``TF_CONFIG``: read it, parse it, and validate it with errors that say how to fix it.

``TF_CONFIG`` is a JSON object with the keys ``"cluster"`` (job name -> list of
``"host:port"``), ``"task"`` (``{"type": ..., "index": ...}``), and optionally
``"rpc_layer"``, ``"environment"`` and ``"session_master"``. Example for worker 0 of a
two-worker cluster::

    {"cluster": {"worker": ["localhost:12345", "localhost:23456"]},
     "task": {"type": "worker", "index": 0}}

``validate_tf_config`` checks everything TF checks (``multi_worker_util``) and more
(addresses, duplicates, the ``ps`` rule of each strategy) and returns a ``TFConfig``.
``use_tf_config`` gives the current thread its own ``TF_CONFIG`` (for virtual clusters
that run several tasks in one process); ``load_tf_config`` reads that or the environment.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import os
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec

__all__ = [
    "TF_CONFIG_ENV",
    "TASK_TYPES",
    "TFConfig",
    "check_task",
    "load_tf_config",
    "parse_tf_config",
    "use_tf_config",
    "validate_address",
    "validate_tf_config",
]

TF_CONFIG_ENV = "TF_CONFIG"
TASK_TYPES = ("chief", "worker", "ps", "evaluator")
STRATEGIES = ("multi_worker", "parameter_server")
_TOP_KEYS = ("cluster", "task", "rpc_layer", "environment", "session_master")
_TASK_KEYS = ("type", "index", "trial")
_EXAMPLE = (
    '{"cluster": {"worker": ["host0:2222", "host1:2222"]}, "task": {"type": "worker", "index": 0}}'
)
_TYPO_CUTOFF = 0.7  # how close (difflib ratio) an unknown key must be to a known one: a typo
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+)$")

_local = threading.local()


@dataclasses.dataclass(frozen=True)
class TFConfig:
    """A validated ``TF_CONFIG``: the cluster and this process's task in it."""

    cluster: ClusterSpec
    task_type: str | None = None
    task_id: int | None = None
    rpc_layer: str | None = None
    environment: str | None = None
    session_master: str | None = None


def _fail(message: str, source: str = "TF_CONFIG") -> ValueError:
    return ValueError(f"{source} {message}")


def _suggest(word: str, choices: tuple[str, ...], cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(word.lower(), choices, n=1, cutoff=cutoff)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _check_extra_keys(raw: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    """TF ignores keys it does not know (managed services add e.g. ``"job"``); so does
    simdist, except a near-miss of a known key (``"clustr"``), which is a typo TF would
    silently read as a missing key."""
    for key in raw:
        if key in known:
            continue
        hint = _suggest(str(key), known, cutoff=_TYPO_CUTOFF)
        if hint:
            raise _fail(
                f"{where} has an unknown key {key!r}{hint}; TF would ignore it and read the "
                f"key it resembles as missing. The keys are {', '.join(map(repr, known))}."
            )


def parse_tf_config(text: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
    """Parse ``TF_CONFIG`` text (or pass a mapping through) into a dict.

    An empty or missing ``TF_CONFIG`` is ``{}`` (a single local task), as in TF.

    Raises:
        ValueError: the text is not JSON, or not a JSON object; the message gives the
            line and column and shows the offending line.
    """
    if text is None:
        return {}
    if isinstance(text, Mapping):
        return dict(text)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _fail(
                f"is not UTF-8 text (byte {err.start} is {text[err.start : err.start + 1]!r}); "
                f"set it to JSON text, e.g. {_EXAMPLE}"
            ) from None
    if not isinstance(text, str):
        raise TypeError(f"TF_CONFIG must be JSON text or a dict, got {type(text).__name__}.")
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as err:
        # json counts lines by "\n"; splitlines() would drop a trailing empty line
        lines = text.split("\n")
        line = lines[err.lineno - 1] if err.lineno <= len(lines) else ""
        raise _fail(
            f"is not valid JSON: {err.msg} at line {err.lineno} column {err.colno} "
            f"(char {err.pos}):\n    {line}\n    {' ' * (err.colno - 1)}^\n"
            "Use double quotes for keys and strings, no trailing commas, and no comments, "
            f"e.g. {_EXAMPLE}"
        ) from None
    except RecursionError:
        raise _fail(
            f"is nested too deeply to parse; a cluster spec is two levels deep, e.g. {_EXAMPLE}"
        ) from None
    if not isinstance(config, dict):
        raise _fail(f"must be a JSON object, got a JSON {type(config).__name__}; use {_EXAMPLE}")
    return config


@contextlib.contextmanager
def use_tf_config(config: str | Mapping[str, Any] | None) -> Iterator[None]:
    """Give the current thread its own ``TF_CONFIG`` (JSON text or dict) inside the block.

    Used to run several tasks of a virtual cluster in one process; it shadows the
    environment variable for this thread only and nests.
    """
    previous = getattr(_local, "config", None)
    _local.config = parse_tf_config(config) if config is not None else None
    try:
        yield
    finally:
        _local.config = previous


def load_tf_config() -> dict[str, Any]:
    """The current ``TF_CONFIG`` as a dict: this thread's override, else the environment."""
    override = getattr(_local, "config", None)
    if override is not None:
        return dict(override)
    return parse_tf_config(os.environ.get(TF_CONFIG_ENV))


def validate_address(address: Any, where: str, strict: bool = True) -> str:
    """Check one ``"host:port"`` address (IPv6 hosts in brackets: ``"[::1]:2222"``).

    With ``strict=False`` (a cluster resolver reading ``TF_CONFIG``, as TF's does) only the
    type is checked: the guide's ``"host1:port"`` placeholders are accepted, and fail when a
    strategy starts the task's server.

    Raises:
        ValueError: not a string, no port, an empty or malformed host, or a port that is
            not an integer in [0, 65535].
    """
    if not isinstance(address, str):
        raise _fail(f'{where} must be a "host:port" string, got {address!r}.')
    if not strict:
        return address
    host, sep, port = address.rpartition(":")
    if not sep or not host:
        raise _fail(
            f'{where} is {address!r}, which is not of the form "host:port"; '
            'write it as e.g. "localhost:12345".'
        )
    if not _HOST.match(host):
        raise _fail(
            f"{where} is {address!r}: host {host!r} is not a hostname or IP address "
            '(IPv6 addresses go in brackets, e.g. "[::1]:2222").'
        )
    if not port.isdigit() or int(port) > 65535:
        raise _fail(
            f"{where} is {address!r}: port {port!r} is not an integer in [0, 65535]; "
            'write it as e.g. "localhost:12345".'
        )
    return address


def _validate_job(job: Any, tasks: Any, strict: bool) -> dict[int, str]:
    if not isinstance(job, str) or job not in TASK_TYPES:
        raise _fail(
            f'"cluster" has a job named {job!r}{_suggest(str(job), TASK_TYPES)}; job names '
            f'must be one of "chief", "worker", "ps", "evaluator".'
        )
    if isinstance(tasks, (list, tuple)):
        indexed = dict(enumerate(tasks))
    elif isinstance(tasks, Mapping):
        indexed = {}
        for key, address in tasks.items():
            if isinstance(key, bool) or not str(key).isdigit():
                raise _fail(
                    f'cluster job "{job}" has task key {key!r}; a job given as an object '
                    'maps task indices ("0", "1", ...) to "host:port" strings.'
                )
            indexed[int(key)] = address
    else:
        raise _fail(
            f'cluster job "{job}" must be a list of "host:port" strings, '
            f'e.g. "{job}": ["host0:2222", "host1:2222"]; got {tasks!r}.'
        )
    if not indexed:
        raise _fail(
            f'cluster job "{job}" has no tasks; give it at least one "host:port" '
            "address or remove the job."
        )
    for index, address in sorted(indexed.items()):
        validate_address(address, f'cluster["{job}"][{index}]', strict)
    return indexed


def _validate_cluster(cluster: Any, strategy: str | None, strict: bool) -> ClusterSpec:
    if not isinstance(cluster, Mapping):
        raise _fail(
            f'"cluster" must be an object mapping job names to address lists, e.g. '
            f'{{"worker": ["host0:2222", "host1:2222"]}}; got {cluster!r}.'
        )
    jobs = {job: _validate_job(job, tasks, strict) for job, tasks in cluster.items()}
    seen: dict[str, str] = {}
    for job, tasks in jobs.items():
        for index, address in sorted(tasks.items()):
            here = f"{job}[{index}]"
            if address in seen:
                raise _fail(
                    f'gives address "{address}" to both {seen[address]} and {here}; every '
                    "task needs its own host:port (change the port of one of them)."
                )
            seen[address] = here
    if len(jobs.get("chief", {})) > 1:
        raise _fail(
            f'job "chief" has {len(jobs["chief"])} tasks; there must be at most one chief. '
            'Keep one address under "chief" and move the others to "worker".'
        )
    if len(jobs.get("evaluator", {})) > 1:
        raise _fail(
            f'job "evaluator" has {len(jobs["evaluator"])} tasks; there must be at most one '
            'evaluator. Keep one address under "evaluator".'
        )
    if jobs and "worker" not in jobs and "chief" not in jobs and "evaluator" not in jobs:
        raise _fail('"cluster" has no "worker" or "chief" job; add e.g. "worker": ["host0:2222"].')
    if strategy == "multi_worker" and "ps" in jobs:
        raise _fail(
            'has a "ps" job, but MultiWorkerMirroredStrategy has no parameter servers; '
            'remove "ps" from "cluster" or use ParameterServerStrategy.'
        )
    if strategy == "parameter_server" and jobs:
        for needed in ("ps", "worker"):
            if needed not in jobs:
                raise _fail(
                    f'has no "{needed}" job, but ParameterServerStrategy needs at least one '
                    f'"worker" and one "ps" task; add "{needed}": ["host:port", ...] to '
                    '"cluster".'
                )
    return ClusterSpec(jobs)


def _task_index(value: Any) -> int:
    if isinstance(value, bool) or not (
        (isinstance(value, int) and value >= 0) or (isinstance(value, str) and value.isdigit())
    ):
        raise _fail(f'"task" "index" must be a non-negative integer such as 0, got {value!r}.')
    return int(value)


def check_task(
    cluster: ClusterSpec, task_type: Any, task_id: Any, source: str = "TF_CONFIG"
) -> None:
    """Check that (``task_type``, ``task_id``) names a task of ``cluster``.

    Args:
        cluster: the cluster.
        task_type: the task's job name.
        task_id: the task's index in that job.
        source: where the task came from, first word of the messages.

    Raises:
        ValueError: an unknown task type, a type with no job in the cluster, or an index
            out of range (each message says which values are allowed).
    """
    if task_type not in TASK_TYPES:
        raise _fail(
            f"task type {task_type!r}{_suggest(str(task_type), TASK_TYPES)} is not "
            'recognised; "task" "type" must be one of "chief", "worker", "ps", "evaluator".',
            source,
        )
    if task_type not in cluster.jobs:
        raise _fail(
            f'task type "{task_type}" is not a job of the cluster (jobs: '
            f'{", ".join(cluster.jobs) or "none"}); add "{task_type}" to "cluster" or set '
            '"task" "type" to one of its jobs.',
            source,
        )
    indices = cluster.task_indices(task_type)
    if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id not in indices:
        count = len(indices)
        if indices == list(range(count)):
            allowed = f"use an index in [0, {count})"
        else:
            allowed = f"use one of its task indices {indices}"
        raise _fail(
            f'task index {task_id} is out of range for job "{task_type}", which has '
            f"{count} task{'s' if count != 1 else ''}; {allowed}.",
            source,
        )


def validate_tf_config(
    config: str | bytes | Mapping[str, Any] | None,
    strategy: str | None = "multi_worker",
    require_task: bool = True,
    check_addresses: bool = True,
) -> TFConfig:
    """Parse and validate a ``TF_CONFIG`` (JSON text or dict).

    Args:
        config: the ``TF_CONFIG`` value; ``None`` or ``""`` means a single local task.
        strategy: ``"multi_worker"`` (no ``ps`` job allowed, as for
            MultiWorkerMirroredStrategy), ``"parameter_server"`` (needs ``ps`` and
            ``worker``), or ``None`` (only the rules every strategy shares).
        require_task: whether a non-empty cluster must come with a ``"task"``.
        check_addresses: whether every address must be a valid ``"host:port"`` (a
            strategy starting its server, ``check-cluster``); False for a cluster resolver,
            which, as TF's, accepts placeholders such as ``"host1:port"``.

    Keys TF does not read (``"job"``, written by some managed training services) are
    ignored, as in TF, unless they look like a typo of a key it reads.

    Returns:
        The validated ``TFConfig``.

    Raises:
        ValueError: anything malformed; the message names the key, the expected shape,
            and how to fix it.
    """
    if strategy not in STRATEGIES and strategy is not None:
        raise ValueError(f"strategy must be one of {STRATEGIES} or None, got {strategy!r}.")
    raw = parse_tf_config(config)
    _check_extra_keys(raw, _TOP_KEYS, "TF_CONFIG")
    for key in ("rpc_layer", "environment", "session_master"):
        if key in raw and not isinstance(raw[key], str):
            raise _fail(f'"{key}" must be a string (e.g. "grpc"), got {raw[key]!r}.')
    cluster = _validate_cluster(raw.get("cluster", {}), strategy, check_addresses)
    task = raw.get("task")
    task_type = task_id = None
    if task is not None:
        if not isinstance(task, Mapping):
            raise _fail(
                f'"task" must be an object like {{"type": "worker", "index": 0}}, got {task!r}.'
            )
        _check_extra_keys(task, _TASK_KEYS, '"task"')
        for key in ("type", "index"):
            if key not in task:
                raise _fail(f'"task" has no "{key}"; write it as {{"type": "worker", "index": 0}}.')
        task_type, task_id = task["type"], _task_index(task["index"])
        if not cluster:
            raise _fail(
                f'"task" is set but "cluster" is missing or empty; add the cluster, e.g. {_EXAMPLE}'
            )
        check_task(cluster, task_type, task_id)
    elif cluster and require_task:
        raise _fail(
            'has a "cluster" but no "task"; every process needs its own task, e.g. '
            '"task": {"type": "worker", "index": 0} on the first worker.'
        )
    return TFConfig(
        cluster=cluster,
        task_type=task_type,
        task_id=task_id,
        rpc_layer=raw.get("rpc_layer"),
        environment=raw.get("environment"),
        session_master=raw.get("session_master"),
    )

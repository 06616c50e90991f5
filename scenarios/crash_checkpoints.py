"""Crash test: SIGKILL a process while it saves, then check what is left on disk.

For each save path (``Checkpoint.write`` to a fixed prefix, numbered ``Checkpoint.save``,
``CheckpointManager``, ``save_weights`` to a prefix and to ``*.weights.h5``, ``model.save``
to a directory and to ``*.keras``, ``ModelCheckpoint(save_weights_only=True)`` to a fixed
name) a child process saves generation after generation of known values (generation ``g``:
every weight is ``g + arange / 100``) and reports each completed save. The parent kills it
with SIGKILL at a seeded random moment, then loads what is on disk as a user would. A kill
passes when the load succeeds and gives exactly (bit for bit) the last reported generation
or the one being saved when the kill came (it may have completed unreported); it fails when
nothing loads (the previous checkpoint was lost), a load raises, or the values are of no
generation (a partial checkpoint was loaded).

    python scenarios/crash_checkpoints.py              # 20 kills for every save path
    python scenarios/crash_checkpoints.py --kills 2 --paths write,keras

Prints one row per save path and exits 1 when any kill failed. ``--paths unsafe_write`` runs
a deliberately unsafe save (the old index deleted before the new one is written, with a
pause between) to show that the check finds lost checkpoints.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

PATHS = (
    "write",
    "save",
    "manager",
    "weights_prefix",
    "weights_h5",
    "model_dir",
    "keras",
    "model_checkpoint",
)


def _values(generation: int) -> list[np.ndarray]:
    kernel = generation + np.arange(12, dtype=np.float32).reshape(4, 3) / 100
    bias = generation + np.arange(3, dtype=np.float32) / 100
    return [kernel, bias]


def _model(tf):
    return tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])


# --- the child: save generation after generation --------------------------------------------
def child(kind: str, directory: str) -> None:
    import simdist as tf

    model = _model(tf)
    checkpoint = tf.train.Checkpoint(model=model)
    manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=2)
    callback = tf.keras.callbacks.ModelCheckpoint(
        os.path.join(directory, "mc"), save_weights_only=True
    )
    callback.set_model(model)
    if kind == "model_dir" or kind == "keras":
        model.compile(optimizer="sgd", loss="mse")
    generation = 0
    while True:
        generation += 1
        model.set_weights(_values(generation))
        if kind == "write":
            checkpoint.write(os.path.join(directory, "fixed"))
        elif kind == "unsafe_write":  # the checker's own check: how saves used to lose data
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, "fixed.index"))
            time.sleep(0.05)
            checkpoint.write(os.path.join(directory, "fixed"))
        elif kind == "save":
            checkpoint.save(os.path.join(directory, "ckpt"))
        elif kind == "manager":
            manager.save()
        elif kind == "weights_prefix":
            model.save_weights(os.path.join(directory, "w"))
        elif kind == "weights_h5":
            model.save_weights(os.path.join(directory, "w.weights.h5"))
        elif kind == "model_dir":
            model.save(os.path.join(directory, "m"))
        elif kind == "keras":
            model.save(os.path.join(directory, "m.keras"))
        elif kind == "model_checkpoint":
            callback.on_epoch_end(generation - 1)
        print(generation, flush=True)


# --- the parent: kill, then load as a user would ---------------------------------------------
def load(kind: str, directory: str) -> list[np.ndarray]:
    import simdist as tf

    if kind in ("model_dir", "keras"):
        name = "m" if kind == "model_dir" else "m.keras"
        return tf.keras.models.load_model(os.path.join(directory, name)).get_weights()
    model = _model(tf)
    if kind in ("weights_prefix", "weights_h5", "model_checkpoint"):
        # ModelCheckpoint(save_weights_only=True) saves through model.save_weights
        name = {"weights_prefix": "w", "weights_h5": "w.weights.h5", "model_checkpoint": "mc"}
        model.load_weights(os.path.join(directory, name[kind]))
        return model.get_weights()
    checkpoint = tf.train.Checkpoint(model=model)
    if kind in ("write", "unsafe_write"):
        prefix = os.path.join(directory, "fixed")
    else:
        prefix = tf.train.latest_checkpoint(directory)
        if prefix is None:
            raise FileNotFoundError(f"no checkpoint recorded in {directory}")
    checkpoint.restore(prefix).assert_consumed()
    return model.get_weights()


def _start(kind: str, directory: str) -> subprocess.Popen:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--child", kind, directory],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _read_reports(process: subprocess.Popen, until: float, wanted: int) -> list[int]:
    """Completed generations reported before ``until`` (or until ``wanted`` of them)."""
    reports: list[int] = []
    buffer = b""
    fd = process.stdout.fileno()
    while time.monotonic() < until and len(reports) < wanted:
        ready, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        reports.extend(int(line) for line in lines if line.strip())
    return reports


def one_kill(kind: str, rng: np.random.Generator, timeout: float = 120.0) -> tuple[bool, str]:
    """Start a saving child, kill it at a random moment, load; (passed, what happened)."""
    with tempfile.TemporaryDirectory(prefix=f"crash-{kind}-") as directory:
        process = _start(kind, directory)
        try:
            first = _read_reports(process, time.monotonic() + timeout, wanted=1)
            if not first:
                error = process.stderr.read().decode(errors="replace")[-800:]
                return False, f"the child never saved: {error}"
            delay = float(rng.uniform(0.0, 0.25))  # a random moment in the stream of saves
            later = _read_reports(process, time.monotonic() + delay, wanted=10**9)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            later += _read_reports(process, time.monotonic() + 1.0, wanted=10**9)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
        last = (first + later)[-1]
        try:
            weights = load(kind, directory)
        except Exception as exc:  # noqa: BLE001 - any failure to load is the finding
            return False, f"generation {last} saved, nothing loads: {type(exc).__name__}: {exc}"
        for generation in (last, last + 1):
            expected = _values(generation)
            if all(
                w.dtype == e.dtype and w.tobytes() == e.tobytes()
                for w, e in zip(weights, expected, strict=True)
            ):
                which = "the last reported" if generation == last else "the one being saved"
                return True, f"loaded generation {generation} ({which})"
        return False, f"generation {last} saved, loaded values of no generation"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="kills per save path")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--paths", default="all", help=f"comma-separated, of {PATHS}")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    kinds = PATHS if args.paths == "all" else tuple(args.paths.split(","))
    unknown = [k for k in kinds if k not in (*PATHS, "unsafe_write")]
    if unknown or args.kills < 1:
        parser.error(f"unknown paths {unknown}" if unknown else "--kills must be at least 1")
    rng = np.random.default_rng(args.seed)
    failures = 0
    print(f"{'save path':<18} {'kills':>5} {'passed':>6}  last outcome")
    for kind in kinds:
        passed = 0
        outcome = ""
        for _ in range(args.kills):
            ok, outcome = one_kill(kind, rng)
            passed += ok
            if not ok:
                print(f"  FAILED {kind}: {outcome}")
        failures += args.kills - passed
        print(f"{kind:<18} {args.kills:>5} {passed:>6}  {outcome}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

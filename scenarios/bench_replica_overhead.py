"""Benchmark: what a virtual replica costs beyond its arithmetic.

Prints three tables:

1. a thread hand-over (a lock ping-pong round trip) with both threads on one CPU and on two
   (Linux), and as the runner hands the turn over (the sleeper woken on the waker's CPU,
   ``simdist.distribute.handover``);
2. ``strategy.run`` of a step with one ``merge_call`` and no arithmetic, at 1 and 4
   replicas, with ``SIMDIST_REPLICA_HANDOVER=same-cpu`` (the default) and ``any`` (the OS
   places every wake-up);
3. the tutorial's Fashion-MNIST CNN train step with one image per replica, split into forward, loss,
   ``trainable_variables`` and ``tape.gradient``, per replica: the fixed Python cost that 4
   replicas pay four times;
4. where a 4-replica step's extra time goes, at global batch 64: the same step with no
   strategy (the batch's shards one after the other, their gradients summed, one Adam
   step) against ``MirroredStrategy``, at 1 and 4 replicas side by side, with the CPU time
   of each kind of thread and its time waiting to run (runnable, with no CPU: Linux
   schedstat): the caller (in a strategy, the coordinator, which runs every
   ``merge_call``), the replica threads, the intra-op helpers.

    python scenarios/bench_replica_overhead.py
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np

import simdist as tf
from simdist import settings
from simdist.demo import create_model


def ping_pong(cpus: list[int] | None, rounds: int = 5000) -> float:
    """Microseconds per round trip between two threads (both kept on ``cpus``)."""
    ping, pong = threading.Lock(), threading.Lock()
    ping.acquire()
    pong.acquire()

    def other():
        if cpus is not None:
            os.sched_setaffinity(0, {cpus[-1]})
        for _ in range(rounds):
            ping.acquire()
            pong.release()

    saved = os.sched_getaffinity(0)
    if cpus is not None:
        os.sched_setaffinity(0, {cpus[0]})
    thread = threading.Thread(target=other)
    thread.start()
    start = time.perf_counter()
    for _ in range(rounds):
        ping.release()
        pong.acquire()
    elapsed = time.perf_counter() - start
    thread.join()
    os.sched_setaffinity(0, saved)
    return elapsed / rounds * 1e6


def handover_ping_pong(rounds: int = 5000) -> float:
    """Microseconds per round trip as the runner hands the turn over (its ``_Signal``s, each
    knowing the thread that waits on it), with the threads free to run on every CPU."""
    from simdist.distribute.handover import Sleeper
    from simdist.distribute.runner import _Signal

    ping, pong = _Signal(), _Signal()
    pong.waiter = Sleeper()

    def other():
        ping.waiter = Sleeper()
        pong.post()  # ready
        for _ in range(rounds):
            ping.wait()
            pong.post()

    thread = threading.Thread(target=other)
    thread.start()
    pong.wait()
    start = time.perf_counter()
    for _ in range(rounds):
        ping.post()
        pong.wait()
    elapsed = time.perf_counter() - start
    thread.join()
    return elapsed / rounds * 1e6


def empty_step_us(replicas: int, runs: int = 2000) -> float:
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])

    def step():
        tf.distribute.get_replica_context().merge_call(lambda strategy: None)

    for _ in range(50):
        strategy.run(step)
    start = time.perf_counter()
    for _ in range(runs):
        strategy.run(step)
    return (time.perf_counter() - start) / runs * 1e6


def pieces_ms(replicas: int, steps: int = 200) -> dict[str, float]:
    """Per replica and step, ms: the Fashion-MNIST CNN with one 28x28 image per replica."""
    tf.random.set_seed(0)
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])
    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )
    rng = np.random.default_rng(0)
    x = rng.random((replicas, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, replicas)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(replicas).repeat()
    totals = dict.fromkeys(("forward", "loss", "trainable_variables", "gradient"), 0.0)

    def timed(name, fn):
        start = time.perf_counter()
        out = fn()
        totals[name] += time.perf_counter() - start
        return out

    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            logits = timed("forward", lambda: model(images, training=True))
            loss = timed(
                "loss",
                lambda: tf.nn.compute_average_loss(
                    loss_object(labels, logits), global_batch_size=replicas
                ),
            )
        variables = timed("trainable_variables", lambda: model.trainable_variables)
        grads = timed("gradient", lambda: tape.gradient(loss, variables))
        optimizer.apply_gradients(zip(grads, variables, strict=True))
        return loss

    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    for _ in range(20):
        strategy.run(train_step, args=(next(iterator),))
    for name in totals:  # the warm-up's share
        totals[name] = 0.0
    for _ in range(steps):
        strategy.run(train_step, args=(next(iterator),))
    return {k: v / (steps * replicas) * 1e3 for k, v in totals.items()}


def serial_shards_step(images, labels, shards: int, batch: int = 64):
    """The CNN's step with no strategy: ``shards`` slices of the batch one after the other,
    their gradients summed, then one Adam step (what the strategy's replicas compute)."""
    tf.random.set_seed(0)
    model = create_model()
    optimizer = tf.keras.optimizers.Adam()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )
    per = batch // shards
    parts = [
        (tf.constant(images[r * per : (r + 1) * per]), tf.constant(labels[r * per : (r + 1) * per]))
        for r in range(shards)
    ]

    def step() -> None:
        total = None
        for x, y in parts:
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(
                    loss_object(y, model(x, training=True)), global_batch_size=batch
                )
            grads = tape.gradient(loss, model.trainable_variables)
            total = grads if total is None else [a + g for a, g in zip(total, grads, strict=True)]
        optimizer.apply_gradients(zip(total, model.trainable_variables, strict=True))

    return step


SCHEDSTAT = os.path.exists("/proc/self/schedstat")  # the kernel keeps per-thread waiting


def thread_times_ms() -> dict[str, tuple[float, float]]:
    """Per kind of thread of this process (the caller, the replica threads, the intra-op
    helpers), ms so far of CPU and of waiting to run (runnable, no CPU given): Linux
    ``/proc/self/task/*/schedstat``; without it, CPU from ``stat`` ticks and waiting 0."""
    kinds = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, tuple[float, float]] = {}
    for tid in os.listdir("/proc/self/task"):
        name = kinds.get(int(tid), "")
        kind = next(
            (k for k in ("replica", "intra-op") if k in name),
            "caller" if int(tid) == os.getpid() else "other",
        )
        try:
            with open(f"/proc/self/task/{tid}/{'schedstat' if SCHEDSTAT else 'stat'}") as f:
                text = f.read()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        if SCHEDSTAT:
            run_ns, wait_ns = (int(v) for v in text.split()[:2])
            cpu, wait = run_ns / 1e6, wait_ns / 1e6
        else:
            fields = text.rsplit(")", 1)[1].split()
            cpu, wait = (int(fields[11]) + int(fields[12])) / tick * 1e3, 0.0
        had_cpu, had_wait = out.get(kind, (0.0, 0.0))
        out[kind] = (had_cpu + cpu, had_wait + wait)
    return out


def four_against_one(steps: int = 40) -> None:
    from bench_training import data  # scenarios/ is on sys.path when run as a script
    from bench_training import simdist_step as mirrored_step
    from side_by_side import print_table, side_by_side

    images, labels = data(6400)
    contenders = {
        "no strategy, 1 shard of 64": serial_shards_step(images, labels, 1),
        "no strategy, 4 shards of 16": serial_shards_step(images, labels, 4),
        "MirroredStrategy, 1 replica": mirrored_step(images, labels, 1, 64),
        "MirroredStrategy, 4 replicas": mirrored_step(images, labels, 4, 64),
    }
    ms = side_by_side(contenders, rounds=9, per_block=10)
    per_thread: dict[str, dict[str, tuple[float, float]]] = {}
    if os.path.isdir("/proc/self/task"):
        for name, fn in contenders.items():
            before = thread_times_ms()
            for _ in range(steps):
                fn()
            after = thread_times_ms()
            per_thread[name] = {
                k: tuple(
                    (a - b) / steps for a, b in zip(times, before.get(k, (0.0, 0.0)), strict=True)
                )
                for k, times in after.items()
            }
    kinds = ("caller", "replica", "intra-op")

    def cell(name: str, kind: str, which: int) -> str:
        if which == 1 and not SCHEDSTAT:
            return "-"
        return f"{per_thread.get(name, {}).get(kind, (0.0, 0.0))[which]:.1f}"

    rows = [
        (name, f"{t:.1f}", *(cell(name, k, 0) for k in kinds), *(cell(name, k, 1) for k in kinds))
        for name, t in ms.items()
    ]
    print("\nthe tutorial's CNN step at global batch 64: ms of wall time (median of 9 shuffled")
    print(f"blocks of 10); ms per step of CPU, and of waiting to run, by thread ({steps} steps)")
    print_table(
        (
            "what",
            "ms/step",
            "CPU: caller",
            "replica",
            "intra-op",
            "waiting: caller",
            "replica",
            "intra-op",
        ),
        rows,
    )
    serial = ms["no strategy, 4 shards of 16"] / ms["no strategy, 1 shard of 64"]
    mirrored = ms["MirroredStrategy, 4 replicas"] / ms["MirroredStrategy, 1 replica"]
    print(f"4 against 1: {serial:.2f}x with no strategy, {mirrored:.2f}x with MirroredStrategy")


def main() -> None:
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) >= 2:
        print("thread hand-over, lock ping-pong round trip")
        print(f"  both threads on CPU {cpus[0]}:        {ping_pong([cpus[0]]):7.1f} us")
        print(f"  on CPUs {cpus[0]} and {cpus[1]}:               {ping_pong(cpus[:2]):7.1f} us")
        print(f"  free, the OS places each wake-up: {ping_pong(None):7.1f} us")
        with settings.override(replica_handover="same-cpu"):
            print(f"  free, woken on the waker's CPU:   {handover_ping_pong():7.1f} us")
    print("\nstrategy.run of a step with one merge_call, us per run")
    print("replicas   same-cpu (default)   SIMDIST_REPLICA_HANDOVER=any")
    for replicas in (1, 4):
        same = empty_step_us(replicas)
        with settings.override(replica_handover="any"):
            anywhere = empty_step_us(replicas)
        print(f"{replicas:8d}   {same:18.0f}   {anywhere:28.0f}")
    print("\nthe tutorial's Fashion-MNIST CNN, one image per replica: ms per replica per step")
    print("replicas   forward     loss   trainable_variables   gradient")
    for replicas in (1, 4):
        p = pieces_ms(replicas)
        print(
            f"{replicas:8d}   {p['forward']:7.3f}  {p['loss']:7.3f}   "
            f"{p['trainable_variables']:19.3f}   {p['gradient']:8.3f}"
        )
    four_against_one()


if __name__ == "__main__":
    main()

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
   replicas pay four times.

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


if __name__ == "__main__":
    main()

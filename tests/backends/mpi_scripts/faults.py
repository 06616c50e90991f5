"""One worker misbehaves in a small multi-worker loop; under mpiexec or one process per TF_CONFIG.

    python faults.py --fault return_early --worker 1 [--timeout-seconds 1] [--main]

Faults: raise, return_early (one step fewer), extra (one collective more after the loop),
exit0 (sys.exit(0) mid-loop), os_exit0 (os._exit(0) mid-loop), kill (SIGKILL mid-loop),
term (SIGTERM mid-loop), sleep (a straggler of --sleep seconds mid-loop), none. ``--main``
runs the loop inside ``simdist.backends.mpi.run_worker_main``. Prints "done <worker> <total>"
when the loop ends.
"""

import argparse
import os
import signal
import sys
import time

import simdist as tf

parser = argparse.ArgumentParser()
parser.add_argument("--fault", default="none")
parser.add_argument("--worker", type=int, default=1)
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--sleep", type=float, default=5.0)
parser.add_argument("--timeout-seconds", type=float, default=None)
parser.add_argument("--main", action="store_true", help="inside run_worker_main")
args = parser.parse_args()


def train() -> None:
    tf.config.set_virtual_devices(gpus=1)
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=args.timeout_seconds)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    me = strategy.extended._worker_index
    culprit = me == args.worker
    steps = args.steps - 1 if culprit and args.fault == "return_early" else args.steps
    total = 0.0
    for step in range(steps):
        if culprit and step == 1:
            if args.fault == "raise":
                raise ValueError(f"injected failure on worker {me}")
            if args.fault == "exit0":
                sys.exit(0)
            if args.fault == "os_exit0":
                sys.stdout.flush()
                os._exit(0)
            if args.fault == "sleep":
                time.sleep(args.sleep)
            if args.fault in ("kill", "term"):
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGKILL if args.fault == "kill" else signal.SIGTERM)
        value = strategy.run(lambda: tf.constant(float(me + 1)))
        total += float(strategy.reduce("SUM", value, axis=None))
    if culprit and args.fault == "extra":
        strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
    print(f"done {me} {total}", flush=True)


if args.main:
    from simdist.backends.mpi import run_worker_main

    run_worker_main(train)
else:
    train()

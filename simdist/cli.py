"""The ``simdist`` command: ``simdist demo`` (a TF tutorial) and ``simdist --version``."""

from __future__ import annotations

import argparse
import sys


def _demo(args: argparse.Namespace) -> int:
    from simdist import demo

    demo.run(
        epochs=args.epochs,
        num_train=args.train_size,
        num_test=args.test_size,
        batch_size_per_replica=args.batch_size_per_replica,
        trace_path=args.trace or None,
        progress=not args.no_progress,
        seed=args.seed,
    )
    return 0


def _launch(args: argparse.Namespace) -> int:
    from simdist.sim.launch import launch_script

    if args.workers < 1 or (args.devices_per_worker is not None and args.devices_per_worker < 0):
        print("simdist launch: --workers must be >= 1, --devices-per-worker >= 0", file=sys.stderr)
        return 2
    launch_script(args.script, args.workers, args.devices_per_worker, argv=args.args)
    return 0


def step_models() -> dict:
    """The models ``simdist cost step --model`` knows by name (name -> builder)."""
    from simdist import demo
    from simdist.sim.throughput_validation import resnet50

    # the Fashion-MNIST CNN of TensorFlow's "Custom training with tf.distribute.Strategy";
    # ResNet-50 v1.5 (224x224x3 input: give --input-shape 224,224,3)
    return {"fashion-mnist-cnn": demo.create_model, "resnet50": resnet50}


def build_parser() -> argparse.ArgumentParser:
    import simdist

    parser = argparse.ArgumentParser(
        prog="simdist",
        description="Simulated multi-device testbed for tf.distribute semantics, on NumPy.",
    )
    parser.add_argument("--version", action="version", version=f"simdist {simdist.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="TensorFlow's tutorial 'Custom training with tf.distribute.Strategy' on virtual GPUs",
    )
    demo.add_argument("--epochs", type=int, default=4)
    demo.add_argument("--train-size", type=int, default=12000)
    demo.add_argument("--test-size", type=int, default=1000)
    demo.add_argument("--batch-size-per-replica", type=int, default=16)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    demo.add_argument(
        "--trace",
        default="simdist-demo.trace.json",
        help="where to write the Chrome trace of the profiled step ('' to skip)",
    )
    demo.set_defaults(handler=_demo)
    from simdist.distribute.explain_input import add_parser as add_explain_input_parser

    add_explain_input_parser(sub)
    launch = sub.add_parser(
        "launch",
        help="run a script as a virtual cluster: W workers x L virtual GPUs in one process",
    )
    launch.add_argument("--workers", type=int, default=2)
    launch.add_argument(
        "--devices-per-worker",
        type=int,
        default=None,
        help="virtual GPUs per worker (default: SIMDIST_VIRTUAL_GPUS or 4, as under mpiexec)",
    )
    launch.add_argument("script", help="the Python file every worker runs as __main__")
    launch.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    launch.set_defaults(handler=_launch)
    from simdist.sim import check_cluster

    check = sub.add_parser(
        "check-cluster",
        help="validate a TF_CONFIG cluster and start every task virtually to see it rendezvous",
    )
    check_cluster.add_arguments(check)
    check.set_defaults(handler=check_cluster.run)
    # simdist sensitivity: reduction-order sensitivity (issue 20 item 2)
    from simdist.sim import sensitivity_cli

    sensitivity = sub.add_parser(
        "sensitivity",
        help="replay a training script under each all-reduce algorithm and compare the numbers",
    )
    sensitivity_cli.add_arguments(sensitivity)
    sensitivity.set_defaults(handler=sensitivity_cli.run)
    # simdist check-step: the N-vs-1 step check (issue 20 items 1 and 3)
    from simdist.sim.check_step_cli import add_parser as add_check_step_parser

    add_check_step_parser(sub)
    from simdist.cost.cli import add_parser as add_cost_parser

    add_cost_parser(sub, models=step_models())
    from simdist.topology.cli import add_parser as add_topology_parser

    add_topology_parser(sub)
    from simdist.testing.cli import add_parser as add_conformance_parser

    add_conformance_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for name in ("epochs", "train_size", "batch_size_per_replica"):
        if getattr(args, name, 1) <= 0:
            print(f"simdist: --{name.replace('_', '-')} must be positive", file=sys.stderr)
            return 2
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())

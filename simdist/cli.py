"""The ``simdist`` command: ``simdist demo`` (a TF tutorial) and ``simdist --version``."""

from __future__ import annotations

import argparse
import functools
import sys

from simdist.cli_args import integer, output_file, script_file

# What one process can run as a virtual cluster in bounded time; --no-size-limit lifts it.
MAX_WORKERS = 1024
MAX_REPLICAS = 8192
# The demo's synthetic data set (Fashion-MNIST's sizes); --no-size-limit lifts it.
MAX_DEMO_EXAMPLES = {"train_size": 60000, "test_size": 10000, "epochs": 100}


def _demo(args: argparse.Namespace) -> int:
    from simdist import demo

    if not args.no_size_limit:
        for name, limit in MAX_DEMO_EXAMPLES.items():
            if getattr(args, name) > limit:
                flag = "--" + name.replace("_", "-")
                print(
                    f"simdist demo: {flag} {getattr(args, name)} is above the limit of {limit}; "
                    "pass --no-size-limit to run it anyway",
                    file=sys.stderr,
                )
                return 2
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
    from simdist import settings
    from simdist.sim.launch import launch_script

    devices = args.devices_per_worker
    replicas = args.workers * max(1, settings.get().virtual_gpus if devices is None else devices)
    if not args.no_size_limit and (args.workers > MAX_WORKERS or replicas > MAX_REPLICAS):
        print(
            f"simdist launch: --workers {args.workers} x --devices-per-worker "
            f"{devices if devices is not None else 'default'} is {replicas} replicas, above the "
            f"limit of {MAX_WORKERS} workers and {MAX_REPLICAS} replicas; pass --no-size-limit "
            "to run it anyway",
            file=sys.stderr,
        )
        return 2
    launch_script(args.script, args.workers, args.devices_per_worker, argv=args.args)
    return 0


def step_models() -> dict:
    """The models ``simdist cost step --model`` knows by name (name -> builder)."""
    from simdist import demo
    from simdist.sim.throughput_validation import resnet50

    # the Fashion-MNIST CNN of TensorFlow's "Custom training with tf.distribute.Strategy";
    # ResNet-50 v1.5 (224x224x3 input: give --input-shape 224,224,3); and Keras's own
    # tf.keras.applications models as a user builds them (weights=None, 224x224x3)
    models = {"fashion-mnist-cnn": demo.create_model, "resnet50": resnet50}
    for name in APPLICATION_MODELS:
        models[f"applications.{name}"] = functools.partial(_application_model, name)
    return models


APPLICATION_MODELS = ("ResNet50", "ResNet50V2", "MobileNetV2", "VGG16")


def _application_model(name: str):
    import simdist

    return getattr(simdist.keras.applications, name)(weights=None)


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
    demo.add_argument("--epochs", type=integer(1), default=4)
    demo.add_argument("--train-size", type=integer(1), default=12000)
    demo.add_argument("--test-size", type=integer(1), default=1000)
    demo.add_argument("--batch-size-per-replica", type=integer(1), default=16)
    demo.add_argument("--seed", type=integer(0, 2**32 - 1), default=0)
    demo.add_argument(
        "--no-size-limit",
        action="store_true",
        help=f"allow more than {MAX_DEMO_EXAMPLES['train_size']} training examples, "
        f"{MAX_DEMO_EXAMPLES['test_size']} test examples or {MAX_DEMO_EXAMPLES['epochs']} epochs",
    )
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    demo.add_argument(
        "--trace",
        type=output_file,
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
    launch.add_argument("--workers", type=integer(1), default=2)
    launch.add_argument(
        "--devices-per-worker",
        type=integer(0),
        default=None,
        help="virtual GPUs per worker (default: SIMDIST_VIRTUAL_GPUS or 4, as under mpiexec)",
    )
    launch.add_argument(
        "--no-size-limit",
        action="store_true",
        help=f"allow more than {MAX_WORKERS} workers or {MAX_REPLICAS} replicas",
    )
    launch.add_argument(
        "script", type=script_file, help="the Python file every worker runs as __main__"
    )
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
    """Run the ``simdist`` command; return its exit status.

    A bad flag is one line on stderr and status 2 (argparse's), returned rather than raised,
    so the command can be driven in-process; ``--help`` and ``--version`` return 0.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # argparse: --help, --version, or a bad flag
        return done.code if isinstance(done.code, int) else 2
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())

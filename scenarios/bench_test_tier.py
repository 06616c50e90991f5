"""Benchmark: where the default test tier's time goes (``python3 -m pytest -n auto``).

Runs the tier once, as the README runs it (extra pytest arguments after ``--``), with two
probes on the path of every Python process it starts:

* a pytest plugin in the xdist workers records, for each test, the CPU time of the worker's
  own thread of work, the wall time, and the CPU time of the child processes it waited for
  (``RUSAGE_CHILDREN``: MPI ranks whose launcher waits for them are in it);
* a ``sitecustomize`` records every Python process that starts, and which test started it
  (``PYTEST_CURRENT_TEST``, inherited by the children). It goes first on ``PYTHONPATH``, so
  it hides a ``sitecustomize`` the environment may have for the length of the run.

It prints the run's wall and CPU time, how much of the workers' wall time their own tests
used and how much went on waiting for children, and the files that cost most. The tier's
goal (issue 13) is 90 s on the project's 2-core machine: this table says what stands
between a run and it.

    python scenarios/bench_test_tier.py [--top 15] [-- extra pytest arguments]
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from side_by_side import print_table  # scenarios/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parent.parent

_PLUGIN = """
import os, resource, time
import pytest

def _children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall, kids = time.process_time(), time.perf_counter(), _children()
    yield
    drawn = int(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))
    with open(os.path.join({out!r}, f"tests.{{os.getpid()}}.tsv"), "a") as f:
        f.write(f"{{item.nodeid}}\\t{{time.process_time() - cpu:.4f}}\\t"
                f"{{time.perf_counter() - wall:.4f}}\\t{{_children() - kids:.4f}}\\t{{drawn}}\\n")
"""

_SITECUSTOMIZE = """
import os
try:
    with open(os.path.join({out!r}, "processes.tsv"), "a") as f:
        test = os.environ.get("PYTEST_CURRENT_TEST", "-").split(" ")[0]
        f.write(f"{{os.getpid()}}\\t{{test}}\\n")
except OSError:
    pass
"""


def run_tier(out: Path, extra: list[str]) -> tuple[float, float, int]:
    """Run the tier with the probes; returns (wall seconds, CPU seconds of the whole run,
    pytest's exit status)."""
    (out / "tier_probe.py").write_text(_PLUGIN.format(out=str(out)))
    (out / "sitecustomize.py").write_text(_SITECUSTOMIZE.format(out=str(out)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(out), env.get("PYTHONPATH")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "pytest", "-n", "auto", "-q", "-p", "tier_probe", *extra]
    done = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "(no output)")
    return wall, cpu, done.returncode


def read_tests(out: Path) -> dict[str, list[tuple[str, float, float, float, bool]]]:
    """Per worker (pid): (test id, own CPU, wall, children's CPU, whether hypothesis draws
    its examples) of each test."""
    per_worker: dict[str, list] = {}
    for path in out.glob("tests.*.tsv"):
        rows = []
        for line in path.read_text().splitlines():
            nodeid, own, wall, kids, drawn = line.rsplit("\t", 4)
            rows.append((nodeid, float(own), float(wall), float(kids), drawn == "1"))
        per_worker[path.stem.split(".")[1]] = rows
    return per_worker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15, help="files and tests listed")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="simdist-tier-") as tmp:
        out = Path(tmp)
        wall, cpu, status = run_tier(out, args.pytest_args)
        per_worker = read_tests(out)
        processes = (out / "processes.tsv").read_text().splitlines()
    if status != 0:
        print(f"pytest exited {status}: the figures below are of a failing run")
    rows = [row for worker in per_worker.values() for row in worker]
    own = sum(r[1] for r in rows)
    kids = sum(r[3] for r in rows)
    print(f"\nthe run: {wall:.1f} s wall, {cpu:.1f} s CPU ({os.cpu_count()} CPUs)")
    print_table(
        ("xdist worker", "tests", "wall in tests s", "own CPU s", "children's CPU s"),
        [
            (
                pid,
                len(worker),
                f"{sum(r[2] for r in worker):.1f}",
                f"{sum(r[1] for r in worker):.1f}",
                f"{sum(r[3] for r in worker):.1f}",
            )
            for pid, worker in sorted(per_worker.items())
        ],
    )
    print(
        f"\ntests' own CPU {own:.1f} s, their children's {kids:.1f} s; the rest of the run's "
        f"CPU ({cpu - own - kids:.1f} s) is collection, pytest itself, and children no test "
        f"waited for; {len(processes)} Python processes started"
    )
    drawn = [r for r in rows if r[4]]
    print(
        f"{len(drawn)} property tests (hypothesis) took {sum(r[1] for r in drawn):.1f} s of "
        f"their own CPU, the other {len(rows) - len(drawn)} tests "
        f"{sum(r[1] for r in rows if not r[4]):.1f} s"
    )
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for nodeid, own_s, wall_s, kids_s, _ in rows:
        entry = by_file[nodeid.split("::")[0]]
        entry[0] += 1
        entry[1] += own_s
        entry[2] += wall_s
        entry[3] += kids_s
    started = collections.Counter(line.split("\t")[1].split("::")[0] for line in processes)
    top = sorted(by_file.items(), key=lambda kv: -(kv[1][1] + kv[1][3]))[: args.top]
    print(f"\nthe {len(top)} files of most CPU (own + children's)")
    print_table(
        ("file", "tests", "own CPU s", "children's CPU s", "wall s", "processes"),
        [
            (file, n, f"{o:.1f}", f"{k:.1f}", f"{w:.1f}", started.get(file, 0))
            for file, (n, o, w, k) in top
        ],
    )
    # A test's wall time beyond its own and its children's CPU is time its worker's core had
    # nothing of this test to run: sleeps, timeouts, waiting for a process to start or to
    # die, or for a CPU the other worker held. MPI ranks are in it too: the launcher's
    # processes that run them are not waited for by the test's own process, so their CPU is
    # not in RUSAGE_CHILDREN (the MPI fault tests show 0.0 children's CPU).
    waiting = sorted(rows, key=lambda r: -(r[2] - r[1] - r[3]))[: args.top]
    print(f"\nthe {len(waiting)} tests of most wall time beyond their CPU")
    print_table(
        ("test", "wall s", "own CPU s", "children's CPU s", "waiting s"),
        [
            (nodeid[:100], f"{w:.1f}", f"{o:.1f}", f"{k:.1f}", f"{w - o - k:.1f}")
            for nodeid, o, w, k, _ in waiting
        ],
    )


if __name__ == "__main__":
    main()

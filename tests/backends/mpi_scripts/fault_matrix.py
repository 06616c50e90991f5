"""Every fault of ``faults.py`` under every launch; prints one markdown row per job.

    python tests/backends/mpi_scripts/fault_matrix.py [LAUNCH-SUBSTRING ...]

Launches: ``mpiexec -n N python -m mpi4py``, ``mpiexec -n N python``, the same inside
``run_worker_main`` (``--main``), and ``python -m simdist.sim.processes -n N``, for N = 2, 4.
Each row: launch, fault, exit status (``HANG`` past 90 s), seconds, how many workers printed
"done", the first line of stderr that names an error. docs/multi-process.md has the table.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FAULTS = str(Path(__file__).with_name("faults.py"))
PY = sys.executable
LAUNCHER_VARS = ("PMI_", "HYDRA_", "MPI_LOCAL", "OMPI_", "PMIX_")
FAULT_ARGS = {
    "raise": [],
    "return_early": [],
    "extra": [],
    "exit0": [],
    "os_exit0": [],
    "kill": [],
    "term": [],
    "sleep (SIMDIST_WORKER_TIMEOUT=1)": ["--fault", "sleep", "--sleep", "3"],
    "sleep (timeout_seconds=1)": ["--fault", "sleep", "--sleep", "3", "--timeout-seconds", "1"],
}


def launches():
    for n in ("2", "4"):
        yield f"mpiexec -n {n} python -m mpi4py", ["mpiexec", "-n", n, PY, "-m", "mpi4py"], []
        yield f"mpiexec -n {n} python", ["mpiexec", "-n", n, PY], []
        yield f"mpiexec -n {n} python, run_worker_main", ["mpiexec", "-n", n, PY], ["--main"]
        processes = [PY, "-m", "simdist.sim.processes", "-n", n, "--timeout", "60"]
        yield f"python -m simdist.sim.processes -n {n}", processes, []


def main(only: list[str]) -> None:
    env0 = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARS)}
    env0["PYTHONPATH"] = os.pathsep.join([str(REPO), env0.get("PYTHONPATH", "")]).rstrip(":")
    env0["MPIEXEC_TIMEOUT"] = "60"
    for name, base, extra in launches():
        if only and not any(o in name for o in only):
            continue
        for fault, fault_args in FAULT_ARGS.items():
            command = [*base, FAULTS, *(fault_args or ["--fault", fault]), *extra]
            timeout = "1" if "WORKER_TIMEOUT" in fault else "10"
            env = dict(env0, SIMDIST_WORKER_TIMEOUT=timeout)
            start = time.perf_counter()
            try:
                done = subprocess.run(
                    command, cwd=REPO, env=env, capture_output=True, text=True, timeout=90
                )
                status, out, err = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired as exc:
                status, out, err = "HANG", str(exc.stdout), str(exc.stderr)
            seconds = time.perf_counter() - start
            named = [
                line
                for line in err.splitlines()
                if re.search(r"Error|died|left its|ended in", line) and not line.startswith(" ")
            ]
            message = named[0] if named else "(no message)"
            message = re.sub(r"pid \d+", "pid N", message)[:170]
            finished = len(re.findall(r"done \d", out))
            print(f"| `{name}` | {fault} | {status} | {seconds:.1f} | {finished} | {message} |")
            sys.stdout.flush()
    print("load average", open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    main(sys.argv[1:])

"""CRC-32C throughput (simdist.data.crc32c): the vector kernel against the byte loop, and a
TFRecord file of small records read through crc32c_many. Prints a table; asserts nothing.

    python3 scenarios/bench_crc32c.py [--mib 16] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import time

from simdist.data import crc32c as crc
from simdist.data.record_framing import frame, split_records


def best_seconds(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    size = args.mib << 20
    data = os.urandom(size)
    crc.crc32c(data)  # builds the zero-advance tables once
    vector = best_seconds(lambda: crc.crc32c(data), args.repeats)
    sample = data[: 1 << 20]
    loop = best_seconds(lambda: crc._loop(sample, 0xFFFFFFFF), 1) * (size / len(sample))
    records = [os.urandom(200) for _ in range(size // 216)]
    file_bytes = b"".join(frame(r) for r in records)
    read = best_seconds(lambda: sum(1 for _ in split_records(file_bytes)), args.repeats)
    mb = size / 1e6
    print(f"| what ({args.mib} MiB) | seconds | MB/s |")
    print("| --- | --- | --- |")
    print(f"| crc32c, one buffer (vector kernel) | {vector:.4f} | {mb / vector:.0f} |")
    print(f"| crc32c, byte loop (from 1 MiB) | {loop:.3f} | {mb / loop:.1f} |")
    rate = len(file_bytes) / 1e6 / read
    print(f"| TFRecord split + check, 200-byte records | {read:.4f} | {rate:.0f} |")


if __name__ == "__main__":
    main()

"""The conformance runner: runs catalogue properties against an adapter and reports.

``simdist conformance --impl tensorflow --replicas 4 --properties 'reduce.*'`` prints one
row per property (PASS, FAIL, SKIP, XFAIL for a known difference, XPASS for a known
difference that did not show) with the shrunk counterexample of each failure, can write a
JUnit XML file, and exits 1 when a property FAILs (2 for a usage error).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis.errors import Unsatisfiable

from simdist.testing import known_differences
from simdist.testing.adapters import Adapter, available, load_adapter
from simdist.testing.adapters.base import Unsupported
from simdist.testing.cli import add_arguments
from simdist.testing.properties import Property, describe, select

PASS, FAIL, SKIP, XFAIL, XPASS = "PASS", "FAIL", "SKIP", "XFAIL", "XPASS"


@dataclasses.dataclass
class Outcome:
    """One property's result.

    Attributes:
      property: the property run.
      status: PASS, FAIL, SKIP, XFAIL or XPASS.
      message: why it failed or was skipped ('' when it passed).
      counterexample: the shrunk failing example (None unless it failed).
      seconds: wall time spent.
    """

    property: Property
    status: str
    message: str = ""
    counterexample: Any = None
    seconds: float = 0.0

    @property
    def counterexample_text(self) -> str:
        """The counterexample rendered readably ('' when there is none)."""
        return "" if self.counterexample is None else describe(self.counterexample)


def _settings(max_examples: int, derandomize: bool) -> settings:
    # No explain phase: it reruns a failure under a line tracer to annotate hypothesis's own
    # report, which the runner does not print (it reports the shrunk example and the error).
    return settings(
        phases=[phase for phase in Phase if phase is not Phase.explain],
        max_examples=max_examples,
        derandomize=derandomize,
        deadline=None,
        database=None,
        print_blob=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )


def run_property(
    prop: Property, adapter: Adapter, max_examples: int = 25, derandomize: bool = True
) -> Outcome:
    """Runs one property against ``adapter`` with hypothesis, shrinking any failure.

    Args:
      prop: the property.
      adapter: the implementation's adapter.
      max_examples: hypothesis's example budget.
      derandomize: the same examples on every run (default).

    Returns:
      The Outcome (known differences are not applied here; see ``run``).
    """
    missing = [op for op in prop.requires if not adapter.supports(op)]
    if missing:
        return Outcome(prop, SKIP, f"{adapter.name} does not implement {', '.join(missing)}")
    last: dict[str, Any] = {}
    unsupported: dict[str, int] = {}

    @_settings(max_examples, derandomize)
    @given(prop.examples_for(adapter))
    def check(example):
        try:
            prop.check(adapter, example)
        except Unsupported as why:
            unsupported[str(why)] = unsupported.get(str(why), 0) + 1
            reject()
        except Exception as error:
            last["example"], last["error"] = example, error
            raise

    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check()
    except Unsatisfiable:
        why = (
            "; ".join(sorted(unsupported)) or f"no example fits max_replicas={adapter.max_replicas}"
        )
        return Outcome(prop, SKIP, why, seconds=time.perf_counter() - start)
    except Exception as error:  # noqa: BLE001 - a failing property, reported as FAIL
        error = last.get("error", error)
        message = (
            f"{type(error).__name__}: {error}"
            if type(error).__name__ != "Violation"
            else str(error)
        )
        return Outcome(prop, FAIL, message, last.get("example"), time.perf_counter() - start)
    note = "; ".join(f"{n} input(s) not run: {why}" for why, n in sorted(unsupported.items()))
    return Outcome(prop, PASS, note, seconds=time.perf_counter() - start)


def run(
    adapter: Adapter,
    patterns: Sequence[str] | str | None = None,
    max_examples: int = 25,
    derandomize: bool = True,
    records: tuple[known_differences.KnownDifference, ...] | None = None,
) -> list[Outcome]:
    """Runs the selected properties and applies the known differences.

    Args:
      adapter: the implementation's adapter.
      patterns: property id globs (all when None).
      max_examples: hypothesis's example budget per property.
      derandomize: the same examples on every run.
      records: known differences (the catalogue's when None).

    Returns:
      One Outcome per property, by id.
    """
    outcomes = []
    for prop in select(patterns):
        outcome = run_property(prop, adapter, max_examples, derandomize)
        record = known_differences.find(adapter.name, prop.id, records)
        if record is not None and outcome.status == FAIL:
            outcome.status = XFAIL
            outcome.message = f"known difference: {record.reason} (observed: {outcome.message})"
        elif record is not None and outcome.status == PASS:
            outcome.status = XPASS
            outcome.message = f"a known difference did not show: {record.reason}"
        outcomes.append(outcome)
    return outcomes


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def format_table(outcomes: Sequence[Outcome], impl: str = "", width: int = 100) -> str:
    """The report: a row per property, then each failure's message and counterexample."""
    id_width = max([len(o.property.id) for o in outcomes] + [8])
    lines = [
        f"simdist conformance: {impl}" if impl else "simdist conformance",
        f"{'property':<{id_width}}  {'result':<6}  {'time':>6}  detail",
    ]
    for o in outcomes:
        detail = o.counterexample_text or o.message
        lines.append(
            f"{o.property.id:<{id_width}}  {o.status:<6}  {o.seconds:5.2f}s  "
            f"{_clip(detail, max(20, width - id_width - 20))}"
        )
    counts = {s: sum(o.status == s for o in outcomes) for s in (PASS, FAIL, SKIP, XFAIL, XPASS)}
    lines.append(", ".join(f"{n} {s.lower()}" for s, n in counts.items() if n) or "0 run")
    for o in outcomes:
        if o.status in (FAIL, XFAIL):
            lines += [
                "",
                f"{o.status} {o.property.id}: {o.property.statement}",
                f"  rule: {o.property.rule}",
                f"  {' '.join(o.message.split())}",
            ]
            if o.counterexample is not None:
                lines.append(f"  counterexample: {o.counterexample_text}")
    return "\n".join(lines)


def junit_xml(outcomes: Sequence[Outcome], impl: str) -> str:
    """The outcomes as a JUnit XML document (one testcase per property)."""
    suite = ET.Element(
        "testsuite",
        name=f"simdist.conformance.{impl}",
        tests=str(len(outcomes)),
        failures=str(sum(o.status == FAIL for o in outcomes)),
        skipped=str(sum(o.status in (SKIP, XFAIL) for o in outcomes)),
        errors="0",
        time=f"{sum(o.seconds for o in outcomes):.3f}",
    )
    for o in outcomes:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{impl}.{o.property.area}",
            name=o.property.id,
            time=f"{o.seconds:.3f}",
        )
        if o.status == FAIL:
            failure = ET.SubElement(case, "failure", message=_clip(o.message, 500))
            failure.text = (
                f"{o.property.statement}\nrule: {o.property.rule}\n{o.message}\n"
                f"counterexample: {o.counterexample_text}"
            )
        elif o.status in (SKIP, XFAIL):
            ET.SubElement(case, "skipped", message=_clip(f"{o.status}: {o.message}", 500))
        elif o.status == XPASS:
            ET.SubElement(case, "system-out").text = o.message
    return ET.tostring(ET.ElementTree(suite).getroot(), encoding="unicode", xml_declaration=True)


def exit_code(outcomes: Sequence[Outcome]) -> int:
    """1 when any property FAILed, else 0 (SKIP, XFAIL and XPASS do not fail a run)."""
    return 1 if any(o.status == FAIL for o in outcomes) else 0


def run_from_args(args: argparse.Namespace, out=None) -> int:
    """Runs the conformance suite for parsed arguments; returns the exit code."""
    out = sys.stdout if out is None else out
    workers = getattr(args, "workers", None)  # each flag's range is checked by its parser
    if args.junit is not None:
        folder = os.path.dirname(os.path.abspath(args.junit))
        if not args.junit.strip() or os.path.isdir(args.junit):
            print(f"simdist conformance: --junit {args.junit!r}: name a file", file=sys.stderr)
            return 2
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            print(
                f"simdist conformance: --junit {args.junit}: folder {folder} does not exist or "
                "is not writable; create it first",
                file=sys.stderr,
            )
            return 2
    selected = select(args.properties)
    if not selected:
        print(
            f"simdist conformance: --properties: no property matches {args.properties!r}",
            file=sys.stderr,
        )
        return 2
    if args.list:
        for prop in selected:
            print(f"{prop.id}: {prop.statement}", file=out)
        return 0
    try:
        adapter = load_adapter(args.impl, args.replicas)
    except (ValueError, ImportError, TypeError, RuntimeError) as error:
        print(f"simdist conformance: --impl {args.impl}: {error}", file=sys.stderr)
        return 2
    try:
        if workers is not None:
            adapter.set_workers(workers)
        outcomes = run(adapter, args.properties, args.max_examples, not args.random)
    finally:
        adapter.close()
    shape = f"{adapter.name}, up to {args.replicas} replicas"
    if workers is not None:
        shape += f", {adapter.min_workers}..{adapter.max_workers} workers"
    print(format_table(outcomes, shape), file=out)
    if args.junit:
        with open(args.junit, "w", encoding="utf-8") as f:
            f.write(junit_xml(outcomes, adapter.name))
    return exit_code(outcomes)


def main(argv: list[str] | None = None) -> int:
    """``python -m simdist.testing.runner`` (``simdist conformance``); options in ``cli``."""
    parser = add_arguments(
        argparse.ArgumentParser(
            prog="simdist conformance",
            description="Run the tf.distribute conformance catalogue against an implementation. "
            f"Known implementations: {', '.join(available())}.",
        )
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # argparse: --help or a bad flag (status 2), returned
        return done.code if isinstance(done.code, int) else 2
    return run_from_args(args)


if __name__ == "__main__":
    sys.exit(main())

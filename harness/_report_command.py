"""`harness report [SCENARIO_ID ...] [--out DIR] [--mutants] [run options]`: run the
scenarios as `harness run` would (the same options, the same judging: known failures,
required goldens) and write DIR/report.html, one self-contained page
(harness._report_html)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._exit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, _usage

if TYPE_CHECKING:
    from harness._results import Ran
    from harness._run_plan import Plan
    from harness.run._mutants import Matrix
    from harness.scenario import Scenario


def add_parser(sub: Any) -> None:
    from harness._run_plan import add_options

    report = sub.add_parser("report", help="run scenarios and write one self-contained HTML page")
    add_options(report)
    report.add_argument(
        "--out",
        type=Path,
        default=Path("harness-report"),
        metavar="DIR",
        help="where report.html goes (default: ./harness-report)",
    )
    report.add_argument("--mutants", action="store_true",
                        help="add the matrix of scenarios by test-only variants")  # fmt: skip


def made(flag: str, directory: Path) -> bool:
    """Create an output directory, or say in one line why it cannot be."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _usage(f"{flag} {directory}: cannot create it ({exc.strerror or exc})")
        return False
    return True


def write_page(directory: Path, ran: list[Ran], planned: Plan, mutants: Matrix | None) -> Path:
    """DIR/report.html for these results: `harness report`'s page, and `run --html`'s."""
    from harness._report_html import page
    from harness.adapters import runtime_of
    from harness.scenario import clauses

    adapter = planned.adapter
    html = page(ran, adapter=adapter.name, runtime=runtime_of(adapter), clauses=clauses(),
                golden=planned.golden, reference=bool(getattr(adapter, "reference", False)),
                mutants=mutants)  # fmt: skip
    out = directory / "report.html"
    out.write_text(html, encoding="utf-8")
    return out


def report(args: argparse.Namespace, scenarios: list[Scenario]) -> int:
    from harness._progress import Progress
    from harness._results import stray_message
    from harness._run_plan import plan

    if not made("--out", args.out):
        return EXIT_USAGE
    planned = plan(args, scenarios)
    if isinstance(planned, int):
        return planned
    ran = []
    progress = Progress(len(planned.chosen), "report")
    try:
        for item in planned.results():
            progress.step(item.result.scenario.id, item.result.status)
            ran.append(item)
        matrix = None
        if args.mutants:
            from harness.run._mutants import mutant_matrix

            matrix = mutant_matrix(planned.chosen)
        out = write_page(args.out, ran, planned, matrix)
        strays = planned.unknown_goldens()
    finally:
        planned.close()
    print(f"harness report: wrote {out}", file=sys.stderr)
    for path in strays:
        print(f"harness: {stray_message(path, Path.cwd())}", file=sys.stderr)
    return EXIT_OK if all(r.acceptable for r in ran) and not strays else EXIT_FAILED

"""`harness report [SCENARIO_ID ...] [--out DIR] [--mutants] [--adapter SPEC]`: run the
scenarios and write DIR/report.html, one self-contained page (harness._report_html)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._exit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, _choose, _usage

if TYPE_CHECKING:
    from harness.scenario import Scenario


def add_parser(sub: Any) -> None:
    report = sub.add_parser("report", help="run scenarios and write one self-contained HTML page")
    report.add_argument("ids", nargs="*", metavar="SCENARIO_ID", help="default: all")
    report.add_argument(
        "--out",
        type=Path,
        default=Path("harness-report"),
        metavar="DIR",
        help="where report.html goes (default: ./harness-report)",
    )
    report.add_argument(
        "--adapter",
        default=None,
        metavar="SPEC",
        help="the runtime under test, as for `harness run` (default: reference)",
    )
    report.add_argument("--mutants", action="store_true",
                        help="add the matrix of scenarios by test-only variants")  # fmt: skip


def report(args: argparse.Namespace, scenarios: list[Scenario]) -> int:
    from harness._paths import snapshots_dir
    from harness._progress import Progress
    from harness._report_html import page
    from harness._results import Ran
    from harness.adapters import AdapterError, open_adapter, runtime_of
    from harness.run import run_scenarios
    from harness.scenario import clauses

    picked = _choose(args.ids, scenarios)
    if picked is None:
        return EXIT_USAGE
    chosen: list[Scenario] = picked
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _usage(f"--out {args.out}: cannot create it ({exc.strerror or exc})")
    try:
        adapter = open_adapter(args.adapter, args.scenarios)
    except AdapterError as exc:
        return _usage(str(exc))
    golden = snapshots_dir(args.scenarios)
    ran = []
    progress = Progress(len(chosen), "report")
    try:
        for result in run_scenarios(chosen, adapter=adapter, golden=golden):
            progress.step(result.scenario.id, result.status)
            ok = result.status in ("pass", "skip")
            ran.append(Ran(result, result.status.upper(), ok, 0.0))
        matrix = None
        if args.mutants:
            from harness.run._mutants import mutant_matrix

            matrix = mutant_matrix(chosen)
        html = page(ran, adapter=adapter.name, runtime=runtime_of(adapter), clauses=clauses(),
                    golden=golden, reference=bool(getattr(adapter, "reference", False)),
                    mutants=matrix)  # fmt: skip
    finally:
        adapter.close()
    out = args.out / "report.html"
    out.write_text(html, encoding="utf-8")
    print(f"harness report: wrote {out}", file=sys.stderr)
    return EXIT_OK if all(r.acceptable for r in ran) else EXIT_FAILED

"""`harness run`'s results as CI systems read them: JUnit XML, and GitHub workflow
annotations with a markdown step summary; and how a corpus file is named in them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.run import Ran, Result


# -- JUnit XML ------------------------------------------------------------------------
def junit(
    ran: Sequence[Ran],
    adapter: str,
    runtime: str | None,
    root: Path,
    strays: Sequence[Path] = (),
) -> bytes:
    """One testsuite, one testcase per scenario (classname: the adapter; name: the id).
    A failure's message is its first mismatch and its text all of them, each golden
    difference in full; a known failure the expectations accept is skipped, saying so. A
    stray golden file (`strays`) is a failing testcase of its own."""
    import xml.etree.ElementTree as ET

    suite = ET.Element("testsuite", name="keyless-harness", tests=str(len(ran) + len(strays)))
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="runtime", value=runtime or "")
    gate = ran[0].result.level if ran else ""
    ET.SubElement(properties, "property", name="level", value=gate)
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    for item in ran:
        result = item.result
        case = ET.SubElement(suite, "testcase", classname=adapter, name=result.scenario.id)
        case.set("file", shown(result.scenario.path, root))
        case.set("time", f"{item.seconds:.3f}")
        if result.held is not None:  # the highest conformance level it holds
            held = ET.SubElement(case, "properties")
            ET.SubElement(held, "property", name="level", value=result.held)
        detail = "\n".join(_explained(result))
        first = result.mismatches[0] if result.mismatches else ""
        if result.status == "skip":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=first)
        elif item.acceptable and result.status != "pass":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"known failure: {first}").text = detail
        elif not item.acceptable and _errored(result):
            counts["errors"] += 1
            ET.SubElement(case, "error", message=first).text = detail
        elif not item.acceptable:
            counts["failures"] += 1
            why = first or "passes, but the expectations file lists it as failing; remove it"
            ET.SubElement(case, "failure", message=why).text = detail or why
    for path in strays:
        counts["failures"] += 1
        case = ET.SubElement(suite, "testcase", classname=adapter, name=f"golden {path.name}")
        case.set("file", shown(path, root))
        case.set("time", "0.000")
        why = stray_message(path, root)
        ET.SubElement(case, "failure", message=why).text = why
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{sum(r.seconds for r in ran):.3f}")
    top = ET.Element("testsuites")
    top.append(suite)
    ET.indent(top)
    xml: bytes = ET.tostring(top, encoding="utf-8", xml_declaration=True)
    return xml + b"\n"


def _explained(result: Result) -> list[str]:
    """Every mismatch, then each golden difference in full (as `harness run --diff`)."""
    lines = [*result.mismatches, *(f"{level}: {m}" for level, m in result.above)]
    for difference in result.differences:
        lines += [f"{difference.path}:", *(f"  {line}" for line in difference.detail())]
    return lines


def stray_message(path: Path, root: Path) -> str:
    """Why a file among the goldens fails a whole-corpus run, and what to do about it."""
    if path.suffix == ".json" and path.is_file():
        return (
            f"{shown(path, root)}: no scenario has the id {path.stem!r}; delete this golden "
            f"snapshot, or add the scenario {path.stem}.yaml"
        )
    return f"{shown(path, root)}: not a golden snapshot (<scenario id>.json); move it elsewhere"


def _errored(result: Result) -> bool:
    """An error, not a failure, exactly when `harness run` and `--json` say `error`: the
    scenario could not run as written (its script broke, or the adapter crashed, went
    silent or broke the protocol). A runtime that ran and ended wrongly is a failure."""
    return result.status == "error"


# -- GitHub ---------------------------------------------------------------------------
def github_annotations(ran: Sequence[Ran], root: Path, strays: Sequence[Path] = ()) -> list[str]:
    """`::error file=...,line=...::` for each unacceptable result, at the scenario file and
    the line of the expectation that failed, where one is named; and one per stray golden."""
    lines = [
        f"::error file={_prop(shown(p, root))},title=unknown golden snapshot::"
        + _data(stray_message(p, root))
        for p in strays
    ]
    for item in ran:
        if item.acceptable:
            continue
        result = item.result
        path = result.scenario.path
        first = result.mismatches[0] if result.mismatches else "passes, but is listed as failing"
        where = f"file={_prop(shown(path, root))},line={expectation_line(path, first)}"
        held = f" (holds {result.held})" if result.held is not None else ""
        title = _prop(f"{result.scenario.id}: {item.label}{held}")
        message = _data("\n".join(result.mismatches) or first)
        lines.append(f"::error {where},title={title}::{message}")
    return lines


def expectation_line(path: Path, mismatch: str) -> int:
    """The line of `expect.KEY` (or `expect:`) for a mismatch about KEY; else line 1."""
    key = mismatch.split(":", 1)[0].split("[", 1)[0].split(".", 1)[0].strip()
    lines = path.read_text("utf-8-sig").splitlines()
    expect = next((i for i, text in enumerate(lines) if text.startswith("expect:")), None)
    if expect is None:
        return 1
    for i in range(expect + 1, len(lines)):
        text = lines[i]
        if text and not text.startswith((" ", "#")):
            break  # the next top-level key: expect's block is over
        if text.strip().startswith(f"{key}:"):
            return i + 1
    return expect + 1


def append_step_summary(text: str) -> None:
    """Add `text` to the GitHub Actions step summary, when the run has one."""
    import os

    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as out:
            out.write(text)


def step_summary(ran: Sequence[Ran], adapter: str, runtime: str | None) -> str:
    rows = [f"### keyless-harness: {adapter}", "", f"Runtime: {runtime or '(not said)'}", "",
            "| scenario | verdict | level | first mismatch |", "|---|---|---|---|"]  # fmt: skip
    for item in ran:
        first = item.result.mismatches[0] if item.result.mismatches else ""
        first = first.replace("|", "\\|")[:200]
        held = item.result.held or "-"
        rows.append(f"| `{item.result.scenario.id}` | {item.label} | {held} | {first} |")
    return "\n".join(rows) + "\n"


def shown(path: Path, root: Path) -> str:
    """A corpus file as CI shows it: relative to the working directory when inside it, else
    from its folder on (`scenarios/x.yaml`, `snapshots/x.json`), as the corpus is laid out
    wherever it is vendored: never an absolute path of this machine."""
    path = path.absolute()
    if path.is_relative_to(root):
        return str(path.relative_to(root))
    return str(path.relative_to(path.parent.parent))


def _prop(value: str) -> str:
    # GitHub's escaping for annotation properties.
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").replace(
        ":", "%3A").replace(",", "%2C")  # fmt: skip


def _data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

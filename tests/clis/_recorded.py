"""Recorded output of the agent CLIs, and its replay: what `python -m tests.clis.record`
writes (tests/fixtures/cli-output/ADAPTER/SCENARIO.json) and what tests/clis/test_cli_recordings.py
reads back through each CLI's own reader, starting nothing and installing nothing.

A recording holds, for one scenario on one CLI: each phase's root and the events its stdout
gave the reader (`read`), the files the reader read under the scenario's folder (`finish`:
the reader class's `kept` globs; an SQLite store as the SQL dump of the tables it reads), the
human end's asks as they stood before CliRun normalised them, and the observation the live
run produced. What is the machine's (the scenario's temp folder, this checkout, the venv,
the user's home) is written as a placeholder (`{folder}`, `{repo}`, ...); a replay puts its
own folder where `{folder}` was, and reads the rest as recorded.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib
import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.contract import Observation

if TYPE_CHECKING:
    from harness.adapters.clis.adapter import CliAdapter
    from harness.adapters.clis.run import Reader
    from harness.run import Ran
    from harness.scenario import Scenario

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "cli-output"
COMMAND = "python -m tests.clis.record"
# Each agent CLI's adapter class, by adapter name: imported without installing anything.
CLASSES = {
    "claude-code": ("harness.adapters.clis.claude_code", "ClaudeCode"),
    "qwen-code": ("harness.adapters.clis.qwen_code", "QwenCode"),
    "opencode": ("harness.adapters.clis.opencode.adapter", "Opencode"),
    "codex": ("harness.adapters.clis.codex.adapter", "Codex"),
}
CLIS = tuple(CLASSES)
# What the readers produce, of an observation as recorded (`recorded_observation`); the
# rest is the run's (CliRun's outcome, hang and asks, the fake's script errors).
READ = ("tool_errors", "handoffs", "final", "sessions")
FOLDER, DASHED = "{folder}", "{folder-dashed}"
SQLITE_HEADER = b"SQLite format 3\x00"


def adapter_class(name: str) -> type[CliAdapter]:
    module, cls = CLASSES[name]
    found: type[CliAdapter] = getattr(importlib.import_module(module), cls)
    return found


def refresh(name: str, scenario_id: str | None = None) -> str:
    """The command that records `name`'s output again (of one scenario, or all)."""
    return f"{COMMAND} {name}" + (f" --scenario {scenario_id}" if scenario_id else "")


def pins(name: str) -> dict[str, str]:
    """The versions adapters/NAME/package-lock.json pins: each direct dependency's."""
    lock = json.loads((REPO / "adapters" / name / "package-lock.json").read_text("utf-8"))
    wanted = lock["packages"][""].get("dependencies", {})
    return {dep: str(lock["packages"][f"node_modules/{dep}"]["version"]) for dep in sorted(wanted)}


def scenario_sha256(scenario: Scenario) -> str:
    return hashlib.sha256(scenario.path.read_bytes()).hexdigest()


def recording_text(doc: dict[str, Any]) -> str:
    """The exact bytes of a recording file: sorted keys, one-space indent, trailing newline."""
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def recordings() -> list[Path]:
    """Every recording in the fixtures, sorted."""
    return sorted(FIXTURES.glob("*/*.json"))


@functools.cache
def load(path: Path) -> dict[str, Any]:
    """A recording as written (shared: copy before changing it)."""
    doc: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return doc


# -- what is the machine's ---------------------------------------------------------------
def dashed(folder: Path | str) -> str:
    """A folder as Claude Code names its project dir after it: every other character a dash."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(folder))


def machine_paths(folder: Path) -> list[tuple[str, str]]:
    """(what, placeholder) for each machine-specific path, longest first: the scenario's
    folder (as given, resolved, and as Claude Code dashes it), this checkout, the venv, the
    user's home. The user name alone, which may be a word of prose (`root`), is left be."""
    pairs = {
        str(folder): FOLDER,
        os.path.realpath(folder): FOLDER,
        dashed(folder): DASHED,
        dashed(os.path.realpath(folder)): DASHED,
        str(REPO): "{repo}",
        sys.prefix: "{venv}",
        os.path.realpath(sys.prefix): "{venv}",
        str(Path.home()): "{home}",
    }
    return sorted(((k, v) for k, v in pairs.items() if len(k) > 1), key=lambda kv: -len(kv[0]))


def anonymised(value: Any, paths: list[tuple[str, str]]) -> Any:
    """`value` (JSON) with each machine path, in strings and keys alike, as its placeholder.
    The scenario's folder (random, so found only where it is meant) is replaced wherever it
    is; any other path only where a path can begin and end, so that a home of `/root` is
    not taken out of `</root>` or `/rootfs`."""
    unique = (FOLDER, DASHED)
    pattern = re.compile("|".join(
        re.escape(k) if v in unique else rf"(?<![\w.<>/~-]){re.escape(k)}(?![\w.-])"
        for k, v in paths
    ))  # fmt: skip
    names = dict(paths)
    return _strings(value, lambda s: pattern.sub(lambda m: names[m[0]], s))


def placed(value: Any, folder: Path) -> Any:
    """`value` (JSON) with `{folder}` as `folder`, as a replay puts it; other placeholders stay."""
    return _strings(value, lambda s: s.replace(FOLDER, str(folder)).replace(DASHED, dashed(folder)))


def _strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    if isinstance(value, dict):
        return {change(k): _strings(v, change) for k, v in value.items()}
    return value


# -- the files a reader reads ----------------------------------------------------------
def kept_files(reader: Reader, folder: Path) -> dict[str, Any]:
    """The files under `folder` that `reader` reads in `finish` (its class's `kept` globs):
    relative path -> its text, or {"sqlite": SQL} for an SQLite store, of the tables the
    reader reads (its class's `tables`, else all)."""
    kept = type(reader).kept
    tables: tuple[str, ...] | None = getattr(type(reader), "tables", None)
    entries: tuple[str, ...] | None = getattr(type(reader), "entries", None)
    out: dict[str, Any] = {}
    for pattern in kept:
        for path in sorted(folder.glob(pattern)):
            if not path.is_file():
                continue
            name = path.relative_to(folder).as_posix()
            with path.open("rb") as opened:
                head = opened.read(len(SQLITE_HEADER))
            if head == SQLITE_HEADER:
                out[name] = {"sqlite": dump_store(path, tables)}
            else:
                out[name] = read_entries(path.read_bytes().decode("utf-8", "replace"), entries)
    return out


def read_entries(text: str, entries: tuple[str, ...] | None) -> str:
    """A JSON-lines file's lines of the entry types the reader reads (its class's `entries`,
    else every line): the rest it never looks at, so a recording need not carry them."""
    if entries is None:
        return text
    kept = []
    for line in text.splitlines(keepends=True):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("type") in entries:
            kept.append(line)
    return "".join(kept)


def dump_store(path: Path, tables: tuple[str, ...] | None) -> str:
    """An SQLite store as SQL (`iterdump`), of `tables` only, their own CREATE statements
    kept; replayed with `executescript`."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as source:
        schema = source.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL "
            "ORDER BY name"
        ).fetchall()
        with contextlib.closing(sqlite3.connect(":memory:")) as copied:
            for name, sql in schema:
                if tables is not None and name not in tables:
                    continue
                copied.execute(sql)
                rows = source.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall()
                if rows:
                    marks = ", ".join("?" * len(rows[0]))
                    copied.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
            copied.commit()
            return "\n".join(copied.iterdump()) + "\n"


def write_files(files: dict[str, Any], folder: Path) -> None:
    """The recorded files, recreated under `folder`."""
    for name, content in sorted(files.items()):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            with contextlib.closing(sqlite3.connect(path)) as db:
                db.executescript(content["sqlite"])
        else:
            path.write_text(content, encoding="utf-8")


# -- an observation, as recorded --------------------------------------------------------
def recorded_observation(observation: Observation) -> dict[str, Any]:
    """The observation in JSON: its snapshot (every reader-derived part whole: tool errors
    with their texts, handoffs with the child's final, the transcript as `sessions`), less
    the model prefix (the fake's, not the CLI's output), with its side requests."""
    doc = observation.snapshot()
    doc.pop("scenario", None)
    doc.pop("model_prefix", None)
    if observation.side_requests:
        doc["side_requests"] = list(observation.side_requests)
    out: dict[str, Any] = json.loads(json.dumps(doc))
    return out


# -- replay ---------------------------------------------------------------------------------
def prime(name: str, reader: Reader, scenario: Scenario) -> None:
    """What a live run tells the reader of the scenario before its output: Codex's, the
    child each delegation prompt starts (its adapter does it in argv)."""
    if name == "codex":
        from harness.adapters.clis.codex.adapter import child_prompts
        from harness.adapters.clis.codex.observe import Events

        assert isinstance(reader, Events)
        reader.prompts = child_prompts(scenario)


def replay(recording: dict[str, Any], scenario: Scenario, folder: Path) -> Observation:
    """The recording read back by its CLI's reader, as CliRun and CliAdapter.run read a live
    run: the files recreated under `folder`, each phase's events fed in turn (its root set
    first), `finish`, the asked questions normalised; then the reader's tool errors,
    handoffs, final texts and transcript, with what the run recorded beside them (outcome,
    error, asks, hang, script errors), rendered as harness.adapters._reported renders any."""
    from harness.adapters._reported import check, observation
    from harness.fake.dialect import Dialect

    name = recording["adapter"]
    data = placed(copy.deepcopy(recording), folder)
    dialect = Dialect.load(name)
    reader = adapter_class(name).reader(dialect.delegation.tool)
    prime(name, reader, scenario)
    write_files(data["files"], folder)
    for phase in data["phases"]:
        reader.root = phase["root"]
        reader.roots.append(phase["root"])
        for event in phase["events"]:
            reader.read(event)
    reader.finish(folder)
    asked = data["asked"]
    for call in asked:
        for question in call["questions"]:
            if isinstance(question.get("question"), str):
                question["question"] = reader.normalised(question["question"])
    ran = data["observation"]
    # The fake reads a runtime's tool names back as the scenario's (its dialect); replayed
    # without one, the dialect does it here.
    tool_errors = [{**e, "tool": dialect.scenario_tool(e["tool"])} for e in reader.tool_errors]
    reported = {
        "outcome": ran["outcome"], "error": ran.get("error"),
        "answerer_calls": ran["answerer_calls"], "asked": asked, "direct": [],
        "tool_errors": tool_errors, "handoffs": reader.handoffs, "final": reader.final,
        "plan_mode": ran.get("plan_mode", {}),
    }  # fmt: skip
    check({"type": "result", "id": scenario.id, "observation": reported}, "result")
    seen = observation(scenario, reported, None)
    seen.hang = ran.get("hang")
    seen.script_errors = list(ran.get("script_errors", []))
    seen.side_requests = list(ran.get("side_requests", []))
    told: dict[str, list[dict[str, Any]]] = {}
    for event in reader.transcript:
        told.setdefault(event["agent"], []).append(event)
    seen.sessions = told
    return seen


def replayed_observation(observation: Observation, folder: Path) -> dict[str, Any]:
    """A replay's observation as a recording holds one: its folder as `{folder}` again."""
    doc: dict[str, Any] = anonymised(recorded_observation(observation), machine_paths(folder))
    return doc


# -- judged as `harness matrix` judges a live run ------------------------------------------
class Replayed:
    """An adapter that hands back one observation it was given: how a recorded or replayed
    observation goes through the one run loop, judged and labelled as a live run is."""

    reference = False

    def __init__(self, name: str, observation: Observation) -> None:
        self.name = name
        self.features = adapter_class(name).features
        self.expectations = REPO / "adapters" / name / "expectations.yaml"
        # The pinned release, which the recordings are of: it picks the entries that apply.
        (self.release,) = pins(name).values()
        self._observation = observation

    def run(self, scenario: Scenario, options: Any) -> Observation:
        return self._observation

    def close(self) -> None:
        pass


@functools.cache
def corpus() -> dict[str, Scenario]:
    from harness.scenario import load_all

    return {s.id: s for s in load_all()}


def judged(name: str, scenario: Scenario, observation: Observation, level: str) -> Ran:
    """`observation` of `scenario` on `name`, through harness.run.run_loop as `harness matrix`
    runs a column (harness.cli.matrix._run: the shipped goldens required, the adapter's
    expectations file) at conformance `level`."""
    from harness._paths import snapshots_dir
    from harness.adapters import Expectations
    from harness.run import run_loop

    adapter = Replayed(name, observation)
    expectations = Expectations.load(adapter.expectations, corpus(), adapter.release)
    ran = run_loop([scenario], adapter, golden=snapshots_dir(), require_golden=True,
                   expectations=expectations, level=level)  # fmt: skip
    return next(iter(ran))


def cell(name: str, scenario: Scenario, observation: Observation) -> str:
    """The observation's cell in `harness matrix`'s table (upstream, as it gates)."""
    from harness.cli.matrix import _cell
    from harness.run import UPSTREAM

    return _cell(judged(name, scenario, observation, UPSTREAM))


def matrix_cells() -> dict[str, dict[str, str]]:
    """adapters/matrix.json's cells, by adapter."""
    table = json.loads((REPO / "adapters" / "matrix.json").read_text("utf-8"))
    return {c["adapter"]: c["cells"] for c in table["columns"]}


def matrix_runtimes() -> dict[str, str]:
    table = json.loads((REPO / "adapters" / "matrix.json").read_text("utf-8"))
    return {c["adapter"]: c["runtime"] for c in table["columns"]}

"""A foreign CLI as a runtime under test: installed from npm into adapters/NAME (from its
lockfile), run one scenario at a time by harness.adapters.clis.run, skipped where it cannot
express a scenario, and its report checked against the protocol's observation schema and
read back in the scenario's names (harness.adapters._reported). Each CLI is a subclass
that says how it is started and spoken to.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from harness.adapters._foreign import reported, scenario_folder, served
from harness.adapters._node import first_on_path, installed_program, node_for
from harness.adapters._node import version as node_version
from harness.adapters._npm import installed_version, pinned, release
from harness.adapters._offline import choice
from harness.adapters.clis.build import Build, is_build, local_build, located
from harness.adapters.clis.run import CliRun, Due, Reader
from harness.contract import Observation, RunOptions
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL

C = TypeVar("C", bound="CliAdapter")

if TYPE_CHECKING:
    from harness.scenario import Scenario


class CliAdapter:
    """The adapter (harness.contract.Adapter) of one CLI; subclasses fill in the CLI."""

    name = ""  # the adapter's name: adapters/NAME, the dialect, --adapter NAME
    label = ""  # the runtime's name in reports
    program = ""  # its executable in node_modules/.bin, and how errors name it
    features: frozenset[str] = frozenset()
    children_in_stream = True
    reference = False
    release = ""  # the version it runs: the pin's, another release's, or a build's own
    # How npm installs it from its lockfile: `npm ci`, unless that cannot be used.
    npm: tuple[str, ...] = ("ci", "--no-audit", "--no-fund")
    # What it cannot express, each with why: a root the human must answer (None: it has a
    # human end), a child that delegates again (None: its subagents can), and phase kinds.
    no_human: str | None = None
    no_nesting: str | None = None
    not_here: Mapping[str, str] = MappingProxyType({})

    def __init__(
        self,
        root: Path,
        offline: bool | None = None,
        quiet: bool = True,
        *,
        expectations: Path | None = None,
        npm: tuple[str, ...] | None = None,
        build: str | None = None,
    ) -> None:
        from harness.adapters._offline import decided
        from harness.fake.dialect import Dialect

        self.root = root  # what it installs from (package.json, its lockfile) and into
        # Off: the CLI may send its nonessential requests (a title), as it does by default;
        # its dialect knows them as side requests.
        self.quiet = quiet
        self.expectations: Path | None = expectations or root / "expectations.yaml"
        self.npm = npm or self.npm
        self.dialect = Dialect.load(type(self).name)
        self.offline, where = decided(self.name, offline)
        self.build: Build | None = None
        if build is not None:  # a local build: nothing installed, the build run as it is
            self.build = local_build(type(self).name, build, self.program)
            self.node, self.cli, self.release = self.build.node, self.build.cli, self.build.release
            shown = f"local build {self.build.path}, {self.release}"
        else:
            self.node = self._node()
            self.cli = self._install()
            shown, self.release = pinned(root), installed_version(root)
        if self.node is not None:
            shown += ", on Node {}.{}".format(*node_version(self.node))
        self.runtime = f"{self.label} ({shown}), {where}"

    def _install(self) -> Path:
        return installed_program(self.name, self.root, self.program, self.npm, self.node)

    def _node(self) -> str | None:
        return node_for(self.root, self.name)

    def close(self) -> None:
        if self.build is not None:
            self.build.close()

    @classmethod
    def reader(cls, delegation: str) -> Reader:
        """How its output is read: stream-json events (Claude Code's, Qwen Code's). Of the
        class, not of an installed CLI: a recording of its output is read back without it
        (tests/clis/_recorded.py)."""
        from harness.adapters.clis.stream_json import Stream

        return Stream(delegation=delegation, children_in_stream=cls.children_in_stream)

    # -- what a CLI says of itself ---------------------------------------------------------
    def skip(self, scenario: Scenario) -> str | None:
        """Why this CLI cannot express the scenario (None: it runs): a root the human must
        answer, a child that delegates again, what its dialect cannot spell, a phase kind."""
        roots = asking_roots(scenario)
        answered = roots and scenario.world.answerer == "scripted"
        nested = any(a.spawned_by in scenario.agents
                     and scenario.agents[a.spawned_by].spawned_by is not None
                     for a in scenario.agents.values())  # fmt: skip
        why = self.answered_root(scenario, roots[0]) if answered else None
        if why is None and nested and self.no_nesting:
            why = f"a child delegates again: {self.no_nesting}"
        phase = next((p.kind for p in scenario.phases if p.kind in self.not_here), None)
        return (
            why
            or self.dialect.cannot.get(scenario.id)
            or (self.not_here[phase] if phase is not None else None)
        )

    def answered_root(self, scenario: Scenario, root: str) -> str | None:
        """Why `root`, which the human must answer, cannot be (None: it can)."""
        return f"{root}, a root, is to be answered, and {self.no_human}" if self.no_human else None

    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]:
        raise NotImplementedError

    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]:
        raise NotImplementedError

    def bare_environment(self, run: CliRun, home: Path) -> dict[str, str]:
        """What every CLI's environment starts from, built from nothing, so that no inherited
        key, token or proxy reaches it: a PATH, and a home and temp dir in the scenario's."""
        path = first_on_path(self.node, "/usr/local/bin:/usr/bin:/bin")
        return {"PATH": path, "HOME": str(home),
                "TMPDIR": str(run.folder), "TERM": "dumb", "LANG": "C.UTF-8"}  # fmt: skip

    def opening(self, run: CliRun, prompt: str) -> list[dict[str, Any]]:
        return []  # the prompt is in its argv; stdin is closed

    def control(
        self, run: CliRun, process: subprocess.Popen[str], event: dict[str, Any]
    ) -> list[Due]:
        return []  # it has no control channel: nothing asks the host

    def override_header(self, run: CliRun, child: str, session: Mapping[str, Any]) -> str | None:
        return "it keeps no record of a child's lineage to override"

    def unasked(self, run: CliRun) -> dict[str, tuple[str, str]]:
        return {}  # every question it puts to a human reaches the host (`control`)

    # -- one scenario -------------------------------------------------------------------
    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        why = self.skip(scenario)
        if any(r.failed or r.aborted for r in scenario.world.answers.values()):
            why = (f"a user-questions provider that throws (`fail`, `abort`): {self.label}'s "
                   "human end is its own, which the adapter cannot make throw")  # fmt: skip
        if why is not None:
            return Observation.empty(scenario.id, "skipped", why)
        with scenario_folder(self.name, scenario.id) as folder:  # config, transcripts, work
            llm, server = served(scenario, options, self.dialect, folder, self.offline)
            try:
                run = CliRun(self, scenario, llm, server, folder, options)
                data = run.phases()
            except (OSError, LookupError, TypeError, ValueError, AttributeError) as exc:
                # Output of a shape this adapter does not know (another CLI version?), or a
                # CLI that cannot be started: this scenario is an error that says so.
                why = f"adapter {self.name}: {scenario.id}: {type(exc).__name__}: {exc}"
                return Observation.broken(scenario.id, why)
            finally:
                server.stop()
        seen = reported(self.name, scenario, data, llm)
        seen.hang = run.hang
        told: dict[str, list[dict[str, Any]]] = {}
        for event in run.stream.transcript:
            told.setdefault(event["agent"], []).append(event)
        seen.sessions = told
        return seen


def asking_roots(scenario: Scenario) -> list[str]:
    """The roots whose scripts call a human-interaction tool, in the scenario's order."""
    human = (ASK_TOOL, PLAN_TOOL)
    return [
        name
        for name, agent in scenario.agents.items()
        if agent.spawned_by is None
        and any(c.tool in human for turn in agent.script for c in turn.calls)
    ]


def member(cls: type[C], root: Path, version: str | None) -> C:
    """The CLI of `cls` as adapters/NAME (`root`) pins it, a local build of it
    (`--adapter NAME@PATH`, harness.adapters.clis.build), or another release of it
    (`--adapter NAME@VERSION`): installed from a lockfile of its own made once and kept
    (harness.adapters._npm.release), judged by the same known-failures file, and named with
    its version in every report."""
    if version is None:
        return cls(root, choice())
    if is_build(version):
        located(cls.name, version)  # a bad path is said before anything starts
        made = cls(root, choice(), build=version)
        made.name = f"{cls.name}@{version}"  # as given: the runtime line says what it is
        return made
    # `npm install --no-save`, not `npm ci`: a lockfile npm makes today holds only the
    # optional packages of platforms like this one, which `npm ci` refuses as out of sync;
    # installed, it must come out unchanged (harness.adapters._npm.install checks).
    made = cls(release(cls.name, root, version), choice(),
               expectations=root / "expectations.yaml",
               npm=("install", "--no-audit", "--no-fund", "--no-save"))  # fmt: skip
    made.name = f"{cls.name}@{version}"
    return made

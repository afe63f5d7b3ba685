"""The durable store, in memory and on disk: the same tests hold both to the same semantics
(resume reads exactly what was written; the log is the truth observations come from), and
the shipped corpus gives byte-identical snapshots on either."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from harness.adapters.reference.batch import batch
from harness.adapters.reference.phases import observe_scenario
from harness.fake import ScriptedLLM, Turn
from harness.run import snapshot_text
from harness.runtime.errors import AgentRunError
from harness.runtime.sessions import SessionError, SessionHeader, SessionStore
from tests.conftest import SCENARIOS
from tests.helpers import assemble

Reopen = Callable[[SessionStore], SessionStore]


@pytest.fixture(params=["memory", "file"])
def media(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SessionStore, Reopen]]:
    """A store, and how a later process would see it: a file-backed store is closed and
    opened afresh over its directory; one in memory can only be seen by itself."""
    if request.param == "memory":
        yield SessionStore(), lambda store: store
        return
    opened: list[SessionStore] = []

    def reopen(store: SessionStore) -> SessionStore:
        store.close()
        opened.append(SessionStore(tmp_path))
        return opened[-1]

    with SessionStore(tmp_path) as store:
        yield store, reopen
    for later in opened:
        later.close()


HEADERS = [
    SessionHeader(id="lead"),
    SessionHeader(id="child", parent_session="lead", origin="subagent", delegation_depth=1),
    SessionHeader(id="odd", parent_session="lead", origin="subagent", delegation_depth=None),
]


@pytest.mark.parametrize("header", HEADERS, ids=lambda h: h.id)
def test_a_header_survives_the_store(
    header: SessionHeader, media: tuple[SessionStore, Reopen]
) -> None:
    store, reopen = media
    store.create(header)
    assert reopen(store).open(header.id).header == header
    assert SessionHeader.from_event(header.to_event()) == header


def test_resume_reads_back_every_event_in_order(media: tuple[SessionStore, Reopen]) -> None:
    store, reopen = media
    lead = store.create(SessionHeader(id="lead"))
    child = store.create(SessionHeader(id="child", parent_session="lead", origin="subagent"))
    # U+2028 and U+0085 stay raw with ensure_ascii=False; a reader splitting on every line
    # separator (str.splitlines) would cut these events in two.
    for text in ["one", "two\u2028halves", "three\x85"]:
        lead.append({"type": "message/user", "content": text})
        child.append({"type": "message/user", "content": text.upper()})
    later = reopen(store)
    resumed = later.open("lead")
    assert resumed.events == lead.events
    assert [m["content"] for m in resumed.messages()] == ["one", "two\u2028halves", "three\x85"]
    assert later.read("child") == child.events
    assert later.ids() == ["child", "lead"]
    # One order across sessions, so an observation never depends on timestamps.
    seqs = sorted(e["seq"] for sid in ("lead", "child") for e in later.read(sid))
    assert seqs == list(range(1, 9))


def test_a_taken_id_and_a_missing_session_are_session_errors(
    media: tuple[SessionStore, Reopen],
) -> None:
    store, reopen = media
    store.create(SessionHeader(id="lead"))
    with pytest.raises(SessionError, match=r"^session 'lead' already exists; choose another id$"):
        store.create(SessionHeader(id="lead"))
    later = reopen(store)
    with pytest.raises(SessionError, match=r"^session 'lead' already exists"):
        later.create(SessionHeader(id="lead"))
    with pytest.raises(SessionError, match=r"^no stored session 'ghost' to resume$"):
        later.open("ghost")
    with pytest.raises(SessionError, match=r"^no stored session 'ghost'$"):
        later.read("ghost")


@pytest.mark.parametrize("text", ["", '{"type": "message/user", "content": "hi"}\n'])
def test_a_log_without_its_header_line_cannot_be_resumed(text: str, tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text(text, encoding="utf-8")
    with SessionStore(tmp_path) as store, pytest.raises(SessionError, match="has no header line"):
        store.open("x")


def test_the_file_holds_every_event_once_a_top_level_run_ends(tmp_path: Path) -> None:
    # Events are buffered per session; a phase's end (Runtime.start/resume returning)
    # flushes them, so another process resuming the session reads them all. The files are
    # read directly here, while the store is still open and has not been asked to flush.
    llm = ScriptedLLM(
        {
            "lead": [Turn.tool("subagent", {"name": "kid", "prompt": "go"}), Turn.text("done")],
            "kid": [Turn.text("x" * 10_000)],  # more than one buffer's worth
        }
    )

    def on_disk() -> dict[str, list[dict[str, object]]]:
        return {
            p.stem: [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
            for p in sorted(tmp_path.glob("*.jsonl"))
        }

    async def run(store: SessionStore) -> None:
        async with httpx.AsyncClient(transport=llm.transport()) as http:
            runtime = assemble(http, store, questions=False)
            await runtime.start("lead", "go")
            assert on_disk() == {"kid": store.read("kid"), "lead": store.read("lead")}
            with pytest.raises(AgentRunError):  # the script is spent: a failed run flushes too
                await runtime.resume("lead", "again")
            assert on_disk()["lead"][-1]["type"] == "agent/error"

    with SessionStore(tmp_path) as store:
        asyncio.run(run(store))
        assert on_disk()["lead"] == store.read("lead")


def test_a_file_store_keeps_few_files_open_however_many_sessions(tmp_path: Path) -> None:
    with SessionStore(tmp_path) as store:
        sessions = [store.create(SessionHeader(id=f"s{i:03}")) for i in range(300)]
        for session in sessions:  # every session writes again after all have opened
            session.append({"type": "message/user", "content": session.id})
        assert len(store._logs._handles) <= 64  # type: ignore[union-attr]
    with SessionStore(tmp_path) as store:
        assert [len(store.read(s.id)) for s in sessions] == [2] * 300


@pytest.mark.slow  # a subprocess
def test_the_store_writes_utf8_whatever_the_locale(tmp_path: Path) -> None:
    # Each open/read names its encoding: under warn_default_encoding an unnamed one is an
    # EncodingWarning, made an error here.
    code = (
        "import sys; from pathlib import Path\n"
        "from harness.runtime.sessions import SessionHeader, SessionStore\n"
        "with SessionStore(Path(sys.argv[1])) as s:\n"
        "    x = s.create(SessionHeader(id='x'))\n"
        "    x.append({'type': 'message/user', 'content': 'é\u2028'})\n"
        "with SessionStore(Path(sys.argv[1])) as s:\n"
        "    assert s.open('x').events[-1]['content'] == 'é\u2028'\n"
    )
    strict = ["-X", "warn_default_encoding", "-W", "error::EncodingWarning"]
    subprocess.run(
        [sys.executable, *strict, "-c", code, str(tmp_path)],
        check=True,
        env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C", "PATH": ""},
        cwd=Path(__file__).parents[1],
    )
    assert "é" in (tmp_path / "x.jsonl").read_text(encoding="utf-8")


def test_the_corpus_observes_the_same_in_memory_and_on_disk(tmp_path: Path) -> None:
    with batch():
        for sid, scenario in sorted(SCENARIOS.items()):
            folder = tmp_path / sid
            folder.mkdir()
            in_memory = snapshot_text(observe_scenario(scenario).snapshot())
            on_disk = snapshot_text(observe_scenario(scenario, store_dir=folder).snapshot())
            assert on_disk == in_memory, sid

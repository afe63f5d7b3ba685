"""The whole corpus on the reference runtime over every wire: its model client swapped, from
outside, for the official anthropic SDK (Messages), openai SDK (Responses) or google-genai
(Gemini's generateContent), JSON and streamed (harness.adapters.reference.sdk_chat). Every
observation's portable part equals its golden snapshot, pinned over Chat Completions: the
rule does not depend on the wire, and neither does the fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.adapters import ReferenceAdapter
from harness.cli import main
from harness.contract import APIS, RunOptions, Wire, portable
from tests.conftest import SCENARIOS

GOLDENS = Path(__file__).parents[1] / "snapshots"
# What the request body of each API carries and the others' do not.
MARK = {"anthropic-messages": "max_tokens", "openai-responses": "input",
        "gemini-generate": "contents"}  # fmt: skip


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("api", APIS[1:])
def test_every_observation_equals_its_golden_over_the_sdk(api: str, stream: bool) -> None:
    wire = Wire(stream=stream, chunk=3 if stream else None, api=api)
    differ, sent = [], 0
    with ReferenceAdapter() as reference:
        for sid, scenario in sorted(SCENARIOS.items()):
            observed = reference.run(scenario, RunOptions(wire=wire))
            golden = json.loads((GOLDENS / f"{sid}.json").read_text("utf-8"))
            if portable(observed.snapshot()) != portable(golden):
                differ.append(sid)
            for request in observed.requests:  # it did travel on that API
                body = json.loads(request.raw)
                assert MARK[api] in body
                sent += 1
    assert differ == []
    assert sent > 60  # the assembled scenarios' requests, every one on this API


def test_the_cli_knows_the_apis() -> None:
    from harness.cli._options import API_NAMES

    assert API_NAMES == APIS


def test_harness_run_takes_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--api", "anthropic-messages", "--stream", "grandchild-refused"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "1 passed, 0 failed"
    assert main(["run", "--api", "gemini-generate", "grandchild-refused"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"
    args = ["run", "--api", "openai-responses", "--adapter", "jsonl:true"]
    assert main(args) == 2
    assert "--api is the reference runtime's model client" in capsys.readouterr().err

"""`harness serve` under load and abuse, on loopback: a burst, every malformed input a
real client or a broken one sends, a client that leaves mid-stream, a client that never
finishes its headers, and ten thousand requests against a memory bound. Every wait is
bounded and no test depends on another: the shared server is only ever asked, and the test
that stops a server with SIGTERM starts its own.

Run alone with `pytest -m load`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import tests.serving as serving_process

pytestmark = pytest.mark.load

# More than every request to the shared server that consumes a step (the burst's 200, the
# slow client's 20, a few more). The memory test has a server of its own, so the ten
# thousand steps it needs are loaded once, not by every xdist worker that shares `served`.
STEPS = 400
WARM, MEASURED = 200, 10_000
BODY = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
AGENT = {"X-Harness-Agent": "lead"}
# Bytes of RSS growth over 10,000 requests, as the README states. Measured: 0 with the
# last 16 requests kept, 1.4 MiB had serve kept every request, so the bound tells them apart.
RSS_GROWTH_BOUND = 1024 * 1024


class Served(serving_process.Served):
    """A served process, and a raw socket to it."""

    def raw(self, data: bytes, *, timeout: float = 5.0) -> tuple[int, dict[str, str], Any]:
        """Send bytes as they are and read one response: status, headers, JSON body."""
        with socket.create_connection((self.host, self.port), timeout=timeout) as sock:
            sock.sendall(data)
            received = b""
            while b"\r\n\r\n" not in received or not _complete(received):
                piece = sock.recv(65536)
                if not piece:
                    break
                received += piece
        head, _, body = received.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
        return int(status_line.split()[1]), headers, json.loads(body) if body else None


def _complete(received: bytes) -> bool:
    head, _, body = received.partition(b"\r\n\r\n")
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "content-length":
            return len(body) >= int(value)
    return True


@contextlib.contextmanager
def serving(folder: Path, steps: int, *options: str) -> Iterator[Served]:
    """`harness serve` on a scenario of one root with `steps` replies; its stderr in
    folder (Served.stderr())."""
    said = "\n".join(f"      - say: s{i}" for i in range(1, steps + 1))
    (folder / "load.yaml").write_text(
        "id: load\ntitle: Many replies for one root, for the load test\ncovers: [D1]\n"
        f"features: [assembled]\nagents:\n  lead:\n    script:\n{said}\n"
        "phases: [{start: lead, prompt: go}]\nexpect: {outcome: completed, answerer_calls: 0}\n",
        "utf-8",
    )
    with serving_process.serve_process(
        "load", "--idle-timeout", "60", *options, log_dir=folder, scenarios=folder
    ) as served:
        yield Served(served.proc, served.url, served.log)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    # The default read timeout (10 s): a burst on a loaded machine may take a while to
    # deliver every body, and a stalled one has its own server below.
    options = ["--max-body-mib", "1", "--chunk-delay-ms", "30"]
    with serving(tmp_path_factory.mktemp("load"), STEPS, *options) as server:
        yield server


def post(served: Served, body: Any = BODY, **kw: Any) -> httpx.Response:
    return httpx.post(served.url + "/chat/completions", json=body, headers=AGENT, timeout=5, **kw)


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def test_a_burst_of_200_concurrent_requests_is_answered_in_full(served: Served) -> None:
    async def burst() -> list[int]:
        limits = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(limits=limits, timeout=20) as client:
            replies = await asyncio.gather(*(
                client.post(served.url + "/chat/completions", json=BODY, headers=AGENT)
                for _ in range(200)
            ))  # fmt: skip
        return [r.status_code for r in replies]

    assert asyncio.run(burst()) == [200] * 200


@pytest.mark.parametrize(
    ("name", "request_bytes", "status"),
    [
        ("bad request line", b"NONSENSE\r\n\r\n", 400),
        ("Content-Length abc", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                               b"Content-Length: abc\r\n\r\n", 400),
        ("Content-Length -1", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                              b"Content-Length: -1\r\n\r\n", 400),
        # Still arriving (no blank line yet) when it passes h11's 16 KiB limit.
        ("headers too large", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: "
                              + b"a" * 70_000 + b"\r\n", 431),
        ("no length", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n", 411),
    ],
)  # fmt: skip
def test_broken_http_is_answered_in_json(
    served: Served, name: str, request_bytes: bytes, status: int
) -> None:
    code, headers, body = served.raw(request_bytes)
    assert code == status, name
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert body["error"]["message"] and body["error"]["code"]


def test_a_body_that_stops_arriving_gets_408(tmp_path: Path) -> None:
    with serving(tmp_path, 1, "--read-timeout", "0.3") as served:
        code, headers, body = served.raw(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                                         b"Content-Length: 100\r\n\r\n{}")  # fmt: skip
    assert code == 408 and headers["content-type"] == "application/json; charset=utf-8"
    assert body["error"]["code"] == "request_timeout"


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "OPTIONS", "HEAD"])
def test_other_methods_get_405_with_allow(served: Served, method: str) -> None:
    response = httpx.request(method, served.url + "/chat/completions", timeout=5)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    if method != "HEAD":  # a HEAD answer has no body, by HTTP's rules
        assert error_of(response)["code"] == "method_not_allowed"


def test_bad_bodies_are_refused_before_they_consume_a_step(served: Served) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    cases = [
        (httpx.post(served.url + "/chat/completions", content=deep, headers=AGENT, timeout=5),
         400, None),
        (post(served, {**BODY, "stream_options": 5}), 400, "stream_options"),
        (post(served, {"messages": BODY["messages"]}), 400, "model"),
        (post(served, {**BODY, "messages": []}), 400, "messages"),
        (post(served, {**BODY, "messages": [{"role": "robot", "content": "x"}]}), 400,
         "messages"),
        (post(served, {**BODY, "pad": "x" * 2_000_000}), 413, None),
        (httpx.post(served.url + "/nowhere", json=BODY, timeout=5), 404, None),
    ]  # fmt: skip
    for response, status, param in cases:
        assert response.status_code == status, response.text[:200]
        assert error_of(response)["param"] == param
    # None of them spent a step: the next request gets the step after the last served one.
    first = post(served).json()["choices"][0]["message"]["content"]
    second = post(served).json()["choices"][0]["message"]["content"]
    assert int(second[1:]) == int(first[1:]) + 1


def test_a_query_string_is_ignored_and_the_reply_is_complete(served: Served) -> None:
    reply = post(served, params={"api-version": "2024-06-01"})
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json; charset=utf-8"
    body = reply.json()
    assert body["created"] == 1767225600 and body["system_fingerprint"]
    (choice,) = body["choices"]
    assert choice["logprobs"] is None and choice["message"]["refusal"] is None
    assert body["usage"]["prompt_tokens"] == 1 and body["usage"]["total_tokens"] > 1


def test_a_stream_arrives_event_by_event(served: Served) -> None:
    stamps = []
    with httpx.stream("POST", served.url + "/chat/completions", json={**BODY, "stream": True},
                      headers=AGENT, timeout=5) as response:  # fmt: skip
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        for line in response.iter_lines():
            if line.startswith("data: "):
                stamps.append((time.monotonic(), line[6:]))
    assert stamps[-1][1] == "[DONE]"
    # --chunk-delay-ms 30: each event was written when produced, not the stream at once.
    assert stamps[-1][0] - stamps[0][0] >= 0.03 * (len(stamps) - 2)


def test_a_client_leaving_mid_stream_is_logged_and_sigterm_stops_cleanly(
    tmp_path: Path,
) -> None:
    # 200 ms between events: time enough, even on a loaded machine, for the server to see
    # the client gone before its next event.
    with serving(tmp_path, 3, "--chunk-delay-ms", "200") as served:
        body = json.dumps({**BODY, "stream": True}).encode()
        with socket.create_connection((served.host, served.port), timeout=5) as sock:
            length = str(len(body)).encode()
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                         b"X-Harness-Agent: lead\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + length + b"\r\n\r\n" + body)  # fmt: skip
            assert b" 200 " in sock.recv(200)  # the head and perhaps an event; then leave
        time.sleep(0.5)  # the server notices before its next event
        assert post(served).json()["choices"][0]["message"]["content"] == "s2"
        served.proc.send_signal(signal.SIGTERM)
        assert served.proc.wait(10) == 1  # a step is left
    err = served.stderr()
    assert "the client left during agent lead's step 1, after" in err
    assert "harness serve: got SIGTERM; stopping. agent lead: 1 scripted step(s) never " in err
    assert "Traceback" not in err


def test_a_slow_client_does_not_hold_up_others(served: Served) -> None:
    with socket.create_connection((served.host, served.port), timeout=5) as slow:
        slow.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # and never finishes
        started = time.monotonic()
        for _ in range(20):
            assert post(served).status_code == 200
        assert time.monotonic() - started < 5


async def hammer(served: Served, count: int, connections: int = 8) -> set[int]:
    """`count` requests over a few keep-alive connections, each waiting for its answer
    before the next: a client light enough that the server, not it, sets the pace."""
    body = json.dumps(BODY).encode()
    request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Harness-Agent: lead\r\n"
               b"Content-Type: application/json\r\nContent-Length: "
               + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip
    codes: set[int] = set()

    async def one_connection(n: int) -> None:
        reader, writer = await asyncio.open_connection(served.host, served.port)
        for _ in range(n):
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            codes.add(int(head.split()[1]))
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))  # fmt: skip
            await reader.readexactly(length)
        writer.close()

    share, extra = divmod(count, connections)
    await asyncio.wait_for(
        asyncio.gather(*(one_connection(share + (i < extra)) for i in range(connections))), 60
    )
    return codes


def test_memory_stays_bounded_over_10000_requests(tmp_path: Path) -> None:
    with serving(tmp_path, WARM + MEASURED, "--max-body-mib", "1") as served:
        assert asyncio.run(hammer(served, WARM)) == {200}  # buffers, first allocations
        before = served.rss()
        assert asyncio.run(hammer(served, MEASURED)) == {200}
        assert served.rss() - before < RSS_GROWTH_BOUND


def test_cut_stream_after_ends_each_stream_early_without_done(tmp_path: Path) -> None:
    with serving(tmp_path, 2, "--cut-stream-after", "2") as served:
        streamed = {**BODY, "stream": True}
        url = served.url + "/chat/completions"
        with httpx.stream("POST", url, json=streamed, headers=AGENT, timeout=5) as response:
            events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
        assert len(events) == 2 and "[DONE]" not in events
        assert all(json.loads(e)["choices"][0]["finish_reason"] is None for e in events)
        assert post(served).status_code == 200  # the server goes on; the cut step was served
        assert served.proc.wait(10) == 0
    assert "cut agent lead's step 1 after 2 of" in served.stderr()


def test_a_bug_of_ours_is_a_json_500_and_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.fake import ScriptedLLM
    from harness.fake.asgi import FakeApp

    class Broken(ScriptedLLM):
        def complete(self, request: httpx.Request) -> Any:
            raise KeyError("boom")

    lines: list[str] = []
    app = FakeApp(Broken({}), log=lines.append)

    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://fake") as client:
            return await client.post("/v1/chat/completions", json=BODY)

    response = asyncio.run(ask())
    assert response.status_code == 500
    assert error_of(response) == {
        "message": "the fake failed; see its stderr",
        "type": "server_error",
        "param": None,
        "code": "internal_error",
    }
    assert lines == ["internal error answering POST /v1/chat/completions: KeyError: 'boom'; "
                     "this is a bug in keyless-harness"]  # fmt: skip

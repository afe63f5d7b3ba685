"""`harness serve`: the scripted fake LLM on a real loopback HTTP server, for runtimes that
respx cannot reach (other processes, other languages).

Routing is the same as in-process (harness._routing): by `X-Harness-Agent` when sent, else
by a session header or the conversation itself.
The server binds loopback only, prints its base URL on the first line, and stops by itself
once every script is consumed or after an idle timeout.
"""

from __future__ import annotations

import ipaddress
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from harness.fake import ScriptedLLM

PATH = "/v1/chat/completions"


class NotLoopback(ValueError):
    pass


def check_loopback(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise NotLoopback(f"{host!r} is not an IP address; use 127.0.0.1 or ::1") from None
    if not address.is_loopback:
        raise NotLoopback(
            f"harness serve binds loopback addresses only (127.0.0.0/8 or ::1), not {host}"
        )
    return host


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, llm: ScriptedLLM, host: str, port: int) -> None:
        self.llm = llm
        self.lock = threading.Lock()  # the fake's scripts are consumed one request at a time
        self.activity = threading.Event()
        super().__init__((host, port), _Handler)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/v1"

    def consumed(self) -> bool:
        return not self.llm.unconsumed()


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the first stdout line is the base URL, and nothing else is promised."""

    def _send(self, response: httpx.Response) -> None:
        self.send_response(response.status_code)
        for key in ("content-type",):
            if key in response.headers:
                self.send_header(key, response.headers[key])
        self.send_header("content-length", str(len(response.content)))
        self.end_headers()
        self.wfile.write(response.content)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        if self.path.rstrip("/") not in (PATH, "/chat/completions"):
            error = {
                "message": f"no route {self.path}; POST {PATH}",
                "type": "invalid_request_error",
                "code": "not_found",
            }
            self._send(httpx.Response(404, json={"error": error}))
            return
        request = httpx.Request(
            "POST", f"http://fake{PATH}", headers=dict(self.headers.items()), content=body
        )
        with self.server.lock:
            response = self.server.llm.respond(request)
        self._send(response)
        self.server.activity.set()

    def do_GET(self) -> None:
        error = {
            "message": f"use POST {PATH}",
            "type": "invalid_request_error",
            "code": "not_found",
        }
        self._send(httpx.Response(404, json={"error": error}))


def serve(llm: ScriptedLLM, *, host: str, port: int, idle_timeout: float) -> int:
    """Serve until the scripts are consumed (exit 0) or nobody asks for `idle_timeout`
    seconds (exit 1, naming what was left)."""
    server = FakeServer(llm, check_loopback(host), port)
    print(server.base_url, flush=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    status = 0
    try:
        while not server.consumed():
            if not server.activity.wait(idle_timeout):
                left = "; ".join(str(e) for e in llm.unconsumed())
                print(
                    f"harness serve: idle for {idle_timeout:g} s; stopping. {left}", file=sys.stderr
                )
                status = 1
                break
            server.activity.clear()
    finally:
        server.shutdown()
        server.server_close()
    errors = [str(e) for e in llm.errors]
    for error in errors:
        print(f"harness serve: {error}", file=sys.stderr)
    if status == 0:
        print(
            f"harness serve: all scripts consumed after {len(llm.requests)} request(s)",
            file=sys.stderr,
        )
    return 1 if errors else status

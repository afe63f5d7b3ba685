"""`harness serve`: the scripted fake LLM on a real HTTP server (uvicorn, HTTP/1.1 with
keep-alive) on loopback, for runtimes that respx cannot reach: other processes, other
languages.

Routing is the same as in-process (harness.fake.routing): by `X-Harness-Agent` when sent, else
by a session header or the conversation itself. The server prints its base URL on the
first line and stops by itself once every script is consumed, after an idle timeout, or
on SIGINT/SIGTERM, each time saying why on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.fake.asgi import FakeApp, Limits
from harness.fake.scripted import ScriptedLLM

# A burst of clients connecting at once must wait in the queue, not be refused.
BACKLOG = 2048


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


def listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    return _listening(sock, (host, port))


def listen_unix(path: Path) -> socket.socket:
    return _listening(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), str(path))


def _listening(sock: socket.socket, address: str | tuple[str, int]) -> socket.socket:
    try:
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def serve(
    llm: ScriptedLLM,
    *,
    host: str,
    port: int,
    idle_timeout: float,
    limits: Limits = Limits(),  # noqa: B008 - frozen
) -> int:
    """Serve until the scripts are consumed (exit 0), nobody asks for `idle_timeout`
    seconds, or a signal comes (exit 1 when steps are left, naming them)."""
    sock = listen(check_loopback(host), port)
    print(base_url(sock), flush=True)
    with sock:
        why = asyncio.run(_run(FakeApp(llm, limits), sock, idle_timeout))
    left = "; ".join(str(e) for e in llm.unconsumed())
    status = 0
    if why != "consumed":
        print(f"harness serve: {why}; stopping. {left}".rstrip(), file=sys.stderr)
        status = 1 if left else 0
    errors = [str(e) for e in llm.errors]
    for error in errors:
        print(f"harness serve: {error}", file=sys.stderr)
    if why == "consumed":
        print(f"harness serve: all scripts consumed after {llm.served} request(s)", file=sys.stderr)
    return 1 if errors else status


class ServerThread:
    """The fake served from a thread of its own, for an adapter whose runtime runs in
    another process while the harness waits on it. `stop()` ends it. With `unix`, it is
    also served on that Unix socket: the way in from a network namespace with no route to
    this one's loopback (harness.adapters._offline)."""

    def __init__(
        self,
        llm: ScriptedLLM,
        limits: Limits = Limits(),  # noqa: B008 - frozen
        unix: Path | None = None,
    ) -> None:
        self.sock = listen("127.0.0.1", 0)
        self.base_url = base_url(self.sock)
        self.sockets = [self.sock]
        if unix is not None:
            self.sockets.append(listen_unix(unix))
        self._app = FakeApp(llm, limits)
        self._server: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)
        self._thread.start()
        self._ready.wait(10)

    async def _serve(self) -> None:
        self._server = _server(_config(self._app))
        self._loop = asyncio.get_running_loop()
        self._ready.set()
        await self._server.serve(sockets=self.sockets)

    def _wake(self) -> None:
        if self._server.wake is not None:
            self._server.wake.set()

    @property
    def in_flight(self) -> int:
        """Requests being answered at this moment."""
        return self._app.in_flight

    @property
    def received(self) -> int:
        """Requests that have reached it so far, answered or not."""
        return self._app.received

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            if self._loop is not None and not self._loop.is_closed():
                with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                    self._loop.call_soon_threadsafe(self._wake)
        self._thread.join(10)
        for sock in self.sockets:
            sock.close()


def _config(app: FakeApp) -> Any:
    import uvicorn  # only `serve` and the process adapters pay for it

    return uvicorn.Config(
        app,
        http=_protocol(),
        lifespan="off",
        access_log=False,
        log_level="critical",  # our own lines say what happened; uvicorn's would repeat it
        backlog=BACKLOG,
        timeout_keep_alive=5,
    )


async def _run(app: FakeApp, sock: socket.socket, idle_timeout: float) -> str:
    server = _server(_config(app))
    stopped = asyncio.Event()
    why = ["consumed"]
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, _stop, why, stopped, f"got {sig.name}")
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while app.llm.unconsumed() and not stopped.is_set():
            woke = asyncio.ensure_future(app.activity.wait())
            halt = asyncio.ensure_future(stopped.wait())
            done, _ = await asyncio.wait({woke, halt}, timeout=idle_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            woke.cancel()
            halt.cancel()
            if not done:
                why[0] = f"idle for {idle_timeout:g} s"
                break
            if serving.done():
                why[0] = "the server stopped"
                break
            app.activity.clear()
    finally:
        server.should_exit = True
        await serving
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return why[0]


def _stop(why: list[str], stopped: asyncio.Event, reason: str) -> None:
    why[0] = reason
    stopped.set()


def _protocol() -> Any:
    """uvicorn's h11 protocol, answering what h11 cannot parse (a bad request line or
    Content-Length, headers too large) in JSON too, with h11's status (400 or 431)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from harness.fake.wires.chat_completions import error

    class _Connection(h11.Connection):
        refused: h11.RemoteProtocolError | None = None  # what made h11 give up, if anything

        def next_event(self) -> Any:
            try:
                return super().next_event()
            except h11.RemoteProtocolError as exc:
                self.refused = exc
                raise

    class JsonErrorsProtocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            limit = self.config.h11_max_incomplete_event_size or 16 * 1024  # h11's default
            self.conn = _Connection(h11.SERVER, limit)

        def connection_made(self, transport: Any) -> None:
            # The head and the body go out in separate writes; with Nagle's algorithm the
            # second waits for the client's delayed ACK, about 40 ms a request.
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family != socket.AF_UNIX:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().connection_made(transport)

        def send_400_response(self, msg: str) -> None:
            refused = getattr(self.conn, "refused", None)
            status = refused.error_status_hint if refused is not None else 400
            reason = str(refused) if refused is not None else msg
            answer = error(status, f"malformed HTTP request: {reason}", "malformed_http")
            content = answer.content()
            head = f"HTTP/1.1 {status} {'Bad Request' if status == 400 else 'Error'}\r\n"
            head += f"content-type: {answer.content_type}\r\n"
            head += f"content-length: {len(content)}\r\nconnection: close\r\n\r\n"
            # h11 refuses to send on a connection it has marked broken, so write it raw.
            self.transport.write(head.encode("latin-1") + content)
            self.transport.close()

    return JsonErrorsProtocol


def _server(config: Any) -> Any:
    """uvicorn.Server without its signal capture, which re-raises the signal after shutdown
    and would end the process before `serve` reports what was left."""
    import uvicorn

    class Server(uvicorn.Server):
        # Set (on the server's loop) to end the wait between ticks at once: uvicorn looks
        # at should_exit every 0.1 s, which an adapter stopping a server per scenario paid
        # each time (about 0.15 s of a one-second CLI scenario).
        wake: asyncio.Event | None = None

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # uvicorn pauses 0.1 s for open connections to finish, even when there are
            # none: then there is nothing to wait for (the CLI that talked to it is gone).
            state = self.server_state
            if state.connections or state.tasks:
                await super().shutdown(sockets=sockets)
                return
            for server in self.servers:
                server.close()
            for sock in sockets or []:
                sock.close()
            for server in self.servers:
                await server.wait_closed()
            if not self.force_exit:
                await self.lifespan.shutdown()

        async def main_loop(self) -> None:
            self.wake = asyncio.Event()
            counter = 0
            should_exit = await self.on_tick(counter)
            while not should_exit:
                counter = (counter + 1) % 864000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), 0.1)
                should_exit = await self.on_tick(counter)

    return Server(config)

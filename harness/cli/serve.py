"""`harness serve SCENARIO_ID`: one scenario's scripts on a loopback HTTP server (the fake
behind uvicorn); its options, and loading only the one scenario it serves."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from harness.cli._exits import invalid, usage

if TYPE_CHECKING:
    from harness.fake.dialect import Dialect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario_id", metavar="SCENARIO_ID")
    add = parser.add_argument
    add("--host", default="127.0.0.1", help="loopback address (default: 127.0.0.1)")
    add("--port", type=int, default=0, help="port (default: 0, any free port)")
    add(
        "--idle-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="stop after this long without a request (default: 30)",
    )
    add(
        "--chunk",
        type=int,
        default=None,
        metavar="N",
        help="characters per streamed delta (default: whole)",
    )
    add(
        "--session-header",
        default=None,
        metavar="NAME",
        help="a header your runtime sends that keys a conversation, e.g. "
        "x-deepseek-harness-session-id (default: none; without X-Harness-Agent, requests are "
        "then told apart by the conversation itself)",
    )
    add(
        "--delegation",
        default=None,
        metavar="JSON",
        help="your runtime's spelling of the scenarios' subagent {name, prompt}, e.g. "
        '\'{"tool": "task", "arguments": {"description": "{name}", "prompt": "{prompt}"}}\'',
    )
    add(
        "--dialect",
        default=None,
        metavar="NAME|FILE",
        help="your runtime's spelling of all three scenario tools (subagent, "
        "ask_user_question, exit_plan_mode): a shipped one (claude-code, qwen-code, ...) or "
        'a JSON file of your own (scenarios/INTERPRETING.md, "The dialect")',
    )
    add(
        "--lenient",
        action="store_true",
        help="accept what the real API refuses: no model, or a scripted call to a tool the "
        "request did not declare (default: refuse, naming the field)",
    )
    add(
        "--check-history",
        action="store_true",
        help="refuse a request whose history differs from what was served to that agent, "
        "its replies included (default: off; no real API checks this)",
    )
    add(
        "--max-body-mib",
        type=float,
        default=8.0,
        metavar="MIB",
        help="largest request body accepted; larger gets 413 (default: 8)",
    )
    add(
        "--read-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a request body may stall before 408 (default: 10)",
    )
    add(
        "--chunk-delay-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="wait before each streamed event: a slow or stalled model (default: 0)",
    )
    add("--cut-stream-after", type=int, default=None, metavar="N",
        help="end every stream after N events, with no finish_reason or [DONE]: a model "
        "that drops mid-reply (default: never)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from harness._paths import scenarios_dir
    from harness.contract import FROZEN_EPOCH
    from harness.fake import ScriptedLLM
    from harness.fake.asgi import Limits
    from harness.fake.dialect import DialectError
    from harness.fake.serve import NotLoopback, check_loopback, serve
    from harness.scenario import ScenarioError, load_scenario

    path = (args.scenarios or scenarios_dir()) / f"{args.scenario_id}.yaml"
    if "/" in args.scenario_id or not path.is_file():
        return usage(f"unknown scenario id: {args.scenario_id}; 'harness list' shows the ids")
    try:
        # Only the file it serves: a large scenario folder costs nothing here.
        scenario = load_scenario(path)
    except ScenarioError as exc:
        return invalid(exc, "nothing was served")
    try:
        check_loopback(args.host)
    except NotLoopback as exc:
        return usage(str(exc))
    if not 0 <= args.port <= 65535:
        return usage(f"--port {args.port}: a TCP port is 0 to 65535 (0: any free port)")
    positive = [args.idle_timeout, args.max_body_mib, args.read_timeout]
    if min(positive) <= 0 or args.chunk_delay_ms < 0 or (args.chunk or 1) < 1:
        return usage("--idle-timeout, --max-body-mib, --read-timeout and --chunk take positive "
                      "numbers, --chunk-delay-ms zero or more")  # fmt: skip
    if args.cut_stream_after is not None and args.cut_stream_after < 1:
        return usage("--cut-stream-after takes a positive number of events")
    if args.delegation is not None and args.dialect is not None:
        return usage("--delegation is the dialect's subagent alone; give one of the two")
    try:
        dialect = _dialect(args.delegation, args.dialect)
    except DialectError as exc:
        return usage(str(exc))
    llm = ScriptedLLM(
        {n: a.script for n, a in scenario.agents.items()},
        chunk=args.chunk,
        roots=scenario.roots(),
        session_header=args.session_header,
        dialect=dialect,
        strict=not args.lenient,
        check_history=args.check_history,
        keep=16,  # nothing reads them after a serve; a long one must not grow without bound
        error_bodies=False,
        created=FROZEN_EPOCH,  # the runs' frozen instant: a reply is the same bytes each time
    )
    limits = Limits(
        max_body=int(args.max_body_mib * 1024 * 1024),
        read_timeout=args.read_timeout,
        chunk_delay=args.chunk_delay_ms / 1000,
        cut_after=args.cut_stream_after,
    )
    try:
        return serve(llm, host=args.host, port=args.port, idle_timeout=args.idle_timeout,
                     limits=limits)  # fmt: skip
    except OSError as exc:
        return usage(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")


def _dialect(delegation: str | None, dialect: str | None) -> Dialect:
    from harness.fake.dialect import REFERENCE_DIALECT, Delegation, Dialect, DialectError

    if dialect is not None:
        return Dialect.load(dialect)
    if delegation is None:
        return REFERENCE_DIALECT
    try:
        value = json.loads(delegation)
    except ValueError as exc:
        raise DialectError(f"--delegation: not JSON ({exc})") from None
    return Dialect.of(Delegation.from_json(value, "--delegation"))

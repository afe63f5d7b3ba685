"""A small ACP agent on the official SDK's agent side, for testing the ACP host without a
real one: run as `python tests/acp/agent.py` (`--adapter acp:...`).

It speaks the scenarios' own tool names to the fake (OPENAI_BASE_URL, Chat Completions):
`subagent {name, prompt}` runs a child to its end, in the same process; a root's
`ask_user_question` or `exit_plan_mode` goes to the client as session/request_permission
as an `elicitation/create` form (an ask, whose fields are its questions) or as
`session/request_permission` (a plan review); a child's is refused with an error result
that keeps the rule. Every call is shown to the client (`tool_call`, then its status).
ACP_TEST_UNSHOWN=1: a root's ask is never sent to the client (the opencode hang).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Literal

import acp
import httpx
from acp import schema as s

TOOLS = [
    {"type": "function", "function": {"name": name, "description": name,
                                      "parameters": {"type": "object"}}}
    for name in ("subagent", "ask_user_question", "exit_plan_mode")
]  # fmt: skip
REFUSED = (
    "Error: human interaction is unavailable while the caller is a delegated subagent "
    "(DELEGATED_CALLER)"
)


class Agent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.http = httpx.AsyncClient(timeout=None)

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> s.InitializeResponse:
        return s.InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **kwargs: Any) -> s.NewSessionResponse:
        return s.NewSessionResponse(session_id="sess-1")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> s.PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt)
        final = await self.loop(session_id, text, root=True)
        await self.conn.session_update(session_id, acp.update_agent_message_text(final))
        return s.PromptResponse(stop_reason="end_turn")

    async def loop(self, session_id: str, prompt: str, root: bool) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        while True:
            reply = await self.http.post(
                os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                headers={"authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
                json={"model": "scripted", "messages": messages, "tools": TOOLS},
            )
            message = reply.json()["choices"][0]["message"]
            messages.append(message)
            if not message.get("tool_calls"):
                return str(message.get("content") or "")
            for call in message["tool_calls"]:
                result, failed = await self.call(session_id, call, root)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
                status: Literal["failed", "completed"] = "failed" if failed else "completed"
                await self.conn.session_update(session_id, acp.update_tool_call(
                    call["id"], status=status, content=[acp.tool_content(
                        acp.text_block(result))]))  # fmt: skip

    async def call(self, session_id: str, call: dict[str, Any], root: bool) -> tuple[str, bool]:
        name = call["function"]["name"]
        args = json.loads(call["function"]["arguments"] or "{}")
        await self.conn.session_update(session_id, acp.start_tool_call(
            call["id"], name, status="in_progress", raw_input=args))  # fmt: skip
        if name == "subagent":
            return await self.loop(session_id, str(args.get("prompt")), root=False), False
        if not root:
            return REFUSED, True
        if os.environ.get("ACP_TEST_UNSHOWN") == "1":
            await asyncio.Event().wait()
        if name == "ask_user_question":  # a form, as editors ask their user
            questions = [q for q in args.get("questions") or () if isinstance(q, dict)]
            fields: dict[str, Any] = {
                str(q.get("id")): {"type": "string", "title": str(q.get("question"))}
                for q in questions}  # fmt: skip
            form = s.ElicitationFormSessionMode(
                session_id=session_id, tool_call_id=call["id"],
                requested_schema=s.ElicitationSchema(properties=fields),
            )  # fmt: skip
            got = await self.conn.create_elicitation(message="Questions", mode=form)
            if got.action != "accept":
                return f"The user chose to {got.action}.", False
            return json.dumps(got.content, sort_keys=True), False
        options = [
            s.PermissionOption(option_id="allow", name="Approve", kind="allow_once"),
            s.PermissionOption(option_id="reject", name="Keep planning", kind="reject_once"),
        ]
        answered = await self.conn.request_permission(
            session_id=session_id, options=options,
            tool_call=s.ToolCallUpdate(tool_call_id=call["id"], title=name, raw_input=args),
        )  # fmt: skip
        allowed = getattr(answered.outcome, "option_id", None) == "allow"
        return ("Plan approved." if allowed else "The user chose to keep planning."), False


async def main() -> None:
    # Only the methods it needs: the SDK looks each handler up by name (acp.router), where
    # its Agent protocol asks for every one.
    await acp.run_agent(Agent())  # type: ignore[arg-type]


if __name__ == "__main__":
    asyncio.run(main())

"""The scripted fake LLM: an OpenAI-compatible Chat Completions endpoint, and an Anthropic
Messages one (POST {base}/messages) and an OpenAI Responses one (POST {base}/responses)
beside it (harness.fake.endpoints), that replay one script per agent, in-process
(`ScriptedLLM.transport()`, `.router()`, or `.intercept()` for a client built elsewhere,
httpx or httpx2) or on loopback (`harness serve`,
harness.fake.serve). This is its public face; the modules beside it
are its parts (see `harness.fake.scripted` for how they fit).

    llm = ScriptedLLM({"parent": [Turn.tool("subagent", {...}), Turn.text("done")]})
    client = httpx.AsyncClient(transport=llm.transport())
"""

from harness.contract import CapturedRequest
from harness.fake.dialect import Delegation
from harness.fake.intercept import OffLoopbackRequest
from harness.fake.script import (
    AmbiguousDelegation,
    InvalidConversation,
    MalformedArguments,
    MalformedRequest,
    ScriptError,
    ScriptExhausted,
    UnconsumedSteps,
    UndeclaredTool,
    UnknownAgent,
    UnresolvedTemplate,
    UnroutableRequest,
)
from harness.fake.scripted import ScriptedLLM
from harness.fake.transport import BASE_URL
from harness.scenario import Call, Turn

__all__ = [
    "BASE_URL",
    "AmbiguousDelegation",
    "Call",
    "CapturedRequest",
    "Delegation",
    "InvalidConversation",
    "MalformedArguments",
    "MalformedRequest",
    "OffLoopbackRequest",
    "ScriptError",
    "ScriptExhausted",
    "ScriptedLLM",
    "Turn",
    "UnconsumedSteps",
    "UndeclaredTool",
    "UnknownAgent",
    "UnresolvedTemplate",
    "UnroutableRequest",
]

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from harness.runtime.core import Runtime
    from harness.runtime.questions import AbortSignal
    from harness.runtime.registry import Agent


@dataclass(frozen=True)
class ToolErrorInfo:
    name: str
    code: str


@dataclass(frozen=True)
class ToolResult:
    content: str
    error: ToolErrorInfo | None = None
    # Set on a subagent handoff, so the parent's durable result names the child it came from.
    child: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @classmethod
    def failed(cls, name: str, code: str, message: str) -> ToolResult:
        # The code stays out of the model-visible text, as upstream does; it lives in the
        # durable event only.
        return cls(content=f"Error: {message}", error=ToolErrorInfo(name, code))


class ToolArgumentError(Exception):
    """The model's arguments do not fit the tool's schema."""


@dataclass(frozen=True)
class ToolContext:
    runtime: Runtime
    agent: Agent
    call_id: str
    signal: AbortSignal


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def schema(self) -> dict[str, Any]: ...

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult: ...


def function_schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def require_str(args: dict[str, Any], key: str, where: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise ToolArgumentError(f"{where}: '{key}' must be a non-empty string")
    return value

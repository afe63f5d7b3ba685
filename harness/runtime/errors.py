class AgentRunError(Exception):
    """An agent could not finish: the model endpoint failed, or it never stopped calling
    tools."""


class AgentAborted(AgentRunError):
    """An agent's run was aborted (its signal fired): the tool calls it had not dispatched
    were skipped, and the run ended there."""

class AgentRunError(Exception):
    """An agent could not finish: the model endpoint failed, or it never stopped calling
    tools."""

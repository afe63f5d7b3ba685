"""The frameworks family: Python agent frameworks, run in-process against the scripted fake
through their own SDK clients (the fake serves every httpx and httpx2 client of the
process: `ScriptedLLM.intercept()`), with the harness as their host: the program that
starts the top-level run and answers what reaches it (interruptions, approvals, resumes).

- `adapter.py`: what every framework shares: skip reasons, the fake, the observation
  checked against the protocol.
- one module per framework: `openai_agents.py` (`--adapter openai-agents`),
  `deepagents.py` (`--adapter deepagents`: LangGraph with deepagents), `google_adk.py`
  (`--adapter google-adk`, each child an AgentTool, and `google-adk-single-turn`),
  `pydantic_ai.py` (`--adapter pydantic-ai`, children typed str, and
  `pydantic-ai-deferred`) and `smolagents.py` (`--adapter smolagents`: the harness as the
  terminal its `input()` reads).

Each framework is an optional extra (`pip install 'keyless-harness[frameworks]'`), imported
only when its adapter runs.
"""

"""The frameworks family: Python agent frameworks, run in-process against the scripted fake
through their own SDK clients (the fake serves every httpx and httpx2 client of the
process: `ScriptedLLM.intercept()`), with the harness as their host: the program that
starts the top-level run and answers what reaches it (interruptions, approvals, resumes).

- `adapter.py`: what every framework shares: skip reasons, the fake, the observation
  checked against the protocol.
- one module per framework: `openai_agents.py` (`--adapter openai-agents`) and
  `deepagents.py` (`--adapter deepagents`: LangGraph with deepagents).

Each framework is an optional extra (`pip install 'keyless-harness[frameworks]'`), imported
only when its adapter runs.
"""

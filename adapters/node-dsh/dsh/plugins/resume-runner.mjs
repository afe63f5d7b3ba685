// Cordis plugin: upstream's headless runner, able to resume. The stock `headless-runner`
// always creates a new `session-<uuid>` and takes no --resume; a scenario's `resume:` phase
// brings a stored session back as a new runtime root. With config.resume this calls
// ctx.agents.resume({resumeSessionId}) instead of ctx.agents.create(); the rest is what the
// stock runner does: follow up with the task, wait until idle, flush the session, print the
// last assistant text, and exit 0 only if the turn completed. It imports dsh packages, so it
// lives under dsh/ where they resolve to the very instances the CLI runs.
import { randomUUID } from "node:crypto";
import { installModelSelection } from "@deepseek-ai/dsh-agent";
import { createUserMessage } from "@deepseek-ai/dsh-llm";

export const name = "harness-resume-runner";
export const inject = ["agentDefaultModel", "agents", "sessions"];

function outcomeOf(events, firstSeq) {
  let started = false;
  let text = "";
  let reason;
  for (const event of events) {
    if (event.seq < firstSeq) continue;
    if (event.type === "turn/start") started = true;
    if (!started) continue;
    if (event.type === "assistant/message") {
      const said = event.data.message.content.filter((b) => b.type === "text").map((b) => b.text).join("");
      if (said !== "") text = said;
    }
    if (event.type === "turn/end") reason = event.data.reason;
  }
  return { text, reason };
}

async function run(ctx, config, exit) {
  await ctx.get("loader")?.await();
  const selection = ctx.agentDefaultModel.currentSelection();
  const common = {
    agentOptions: { provider: selection.provider, model: selection.model },
    // A block, not an expression: dsh treats what setup returns as a transaction to commit.
    setup: (agentCtx) => {
      installModelSelection(agentCtx, { current: selection, assembled: undefined });
    },
  };
  const { agent } = config.resume
    ? await ctx.agents.resume({ resumeSessionId: config.resume, ...common })
    : await ctx.agents.create({ sessionId: `session-${randomUUID()}`, meta: { cwd: process.cwd() }, ...common });
  await agent.whenIdle();
  const firstSeq = agent.session.seq;
  agent.followup(createUserMessage({ content: [{ type: "text", text: config.task }], source: { kind: "user" } }));
  await agent.whenIdle();
  await ctx.sessions.flush(agent.session);
  const { text, reason } = outcomeOf(agent.session.events, firstSeq);
  process.stdout.write(text + "\n");
  if (reason?.kind === "error") process.stderr.write(`dsh: ${reason.error.code}: ${reason.error.message}\n`);
  exit(reason?.kind === "completed" ? 0 : 1);
}

export function apply(ctx, config) {
  const exit = ctx.get("appExit");
  if (exit === undefined) throw new Error("harness-resume-runner: no ctx.appExit");
  run(ctx, config, exit).catch((error) => {
    process.stderr.write(`dsh: ${error instanceof Error ? error.message : String(error)}\n`);
    exit(1);
  });
}

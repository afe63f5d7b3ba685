// Cordis plugin: start agents in plan mode, as a scenario's `plan_mode: true` says. The
// headless runner has no flag for it and dsh-plan-mode no creation-time option ("newly
// spawned agents begin inactive"), so on `agent/created`, while the new agent is idle, this
// calls ctx.planMode.set(agent, true), which logs `plan/mode {active: true}` at once.
// config.agents: "root" (the phase's root), "child" (every delegated agent) or "all".
export const name = "harness-plan-mode";
export const inject = ["planMode", "agents"];

export function apply(ctx, config) {
  const which = config?.agents ?? "none";
  if (which === "none") return;
  ctx.on("agent/created", ({ agent }) => {
    const root = ctx.agents.roots().includes(agent);
    if (which === "all" || (which === "root" && root) || (which === "child" && !root)) {
      ctx.planMode.set(agent, true);
    }
  });
}

// Cordis plugin: a user-questions build from before the rename (NODE_DSH_USER_QUESTIONS)
// provides `ctx.userInteraction`, while the published tools (ask_user_question,
// exit_plan_mode) look for `ctx.userQuestions`. This provides the build's service under the
// published name too, so those tools reach it: the revision is then judged on what its
// service does, rather than failing because a tool found no service at all.
export const name = "harness-user-questions-alias";
export const inject = ["userInteraction"];

export function apply(ctx) {
  ctx.provide("userQuestions", ctx.userInteraction);
}

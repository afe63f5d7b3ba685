// Cordis plugin: the human end of ctx.userQuestions in a headless dsh run, as the scenario's
// `world.answerer` says (scenarios/INTERPRETING.md). assembled.mjs mounts it through the
// --patch overlay with its config:
//   mode       tripwire | unreachable: record the call and never answer (a UI that cannot
//              show the question); scripted: answer from `answers` after `delayMs`;
//              none: register no provider at all (NO_PROVIDER for an admitted caller)
//   answers    question id -> {selected: [...], custom?}, a list of them (that many answer
//              items), "dismiss" (the human closes the question: ASK_CANCELLED), "fail"
//              (the provider itself breaks: a plain Error, no UserQuestionError), "abort"
//              (its wait was aborted: ASK_ABORTED), or "interrupt" (the human stops the
//              asking agent's run: the provider rejects with ASK_ABORTED when the request's
//              signal fires, as upstream's web provider does)
//   callsFile  every call that reaches the provider is appended here as one JSON line (who
//              asked, and the questions as received), so the adapter reports what the human
//              was shown and sees a tripwire reached the moment it happens
// No imports: it needs only the injected service, so module resolution never matters.
import { appendFileSync } from "node:fs";

export const name = "harness-answerer";
export const inject = ["userQuestions"];

export function apply(ctx, config) {
  const { mode = "tripwire", answers = {}, callsFile, delayMs = 0 } = config ?? {};
  if (mode === "none") return;
  ctx.userQuestions.registerProvider({
    async ask(request) {
      // The caller's lineage is read here, in-process: its session log may not be on disk yet.
      const header = request.agent?.session?.header;
      const lineage = header === undefined ? null : { parentSession: header.parentSession, delegationDepth: header.delegationDepth };
      appendFileSync(callsFile, JSON.stringify({ agent: request.agent?.id ?? null, lineage, questions: request.questions }) + "\n");
      if (mode !== "scripted") {
        // Never answers; only the call's abort signal ends the wait.
        return new Promise((_resolve, reject) => {
          request.signal?.addEventListener("abort", () => reject(request.signal.reason), { once: true });
        });
      }
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const missing = request.questions.filter((q) => !Object.hasOwn(answers, q.id)).map((q) => q.id);
      if (missing.length > 0) {
        throw new Error(`scripted human has no answer for question(s) ${missing.join(", ")}; add them under world.answers`);
      }
      if (request.questions.some((q) => answers[q.id] === "fail")) {
        throw new Error("the user-questions provider failed");
      }
      if (request.questions.some((q) => answers[q.id] === "interrupt")) {
        const aborted = await serviceError(ctx.userQuestions, "ask_user_question was aborted before the user answered", "ASK_ABORTED");
        return new Promise((_resolve, reject) => {
          // Only the request's own signal ends the wait: a runtime that forwards another,
          // or none, leaves it waiting.
          request.signal?.addEventListener("abort", () => reject(aborted), { once: true });
          request.agent?.cancel({ kind: "user" });
        });
      }
      if (request.questions.some((q) => answers[q.id] === "abort")) {
        throw await serviceError(ctx.userQuestions, "ask_user_question was aborted before the user answered", "ASK_ABORTED");
      }
      if (request.questions.some((q) => answers[q.id] === "dismiss")) {
        // Closing the question rejects the whole wait, as upstream's UI host does.
        throw await serviceError(ctx.userQuestions, "the user cancelled ask_user_question", "ASK_CANCELLED");
      }
      return {
        answers: request.questions.flatMap((q) => {
          const reply = answers[q.id];
          return (Array.isArray(reply) ? reply : [reply]).map(({ selected, custom }) =>
            custom === undefined || custom === null
              ? { id: q.id, selected: [...selected] }
              : { id: q.id, selected: [...selected], custom },
          );
        }),
      };
    },
  });
}

/** A UserQuestionError as upstream's UI host throws one (ASK_CANCELLED, ASK_ABORTED).
 * Consumers test `instanceof UserQuestionError`, so it must be the service's own class; this
 * plugin imports nothing, so the class is taken from an error the service throws (an empty
 * batch, which asks nobody). */
async function serviceError(service, message, code) {
  const probe = await service.ask({ questions: [] }).then(
    () => undefined,
    (error) => error,
  );
  if (probe?.code !== "EMPTY_QUESTIONS") throw new Error("the service did not refuse an empty batch");
  return new probe.constructor(message, code);
}

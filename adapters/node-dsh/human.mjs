// The scenario's human end for the service-level scenarios (world.answerer): the provider
// registered with upstream's service in this process. dsh/plugins/answerer.mjs is its twin
// inside the CLI, for the assembled ones.

import { ScenarioError, fromItem, isObject, show } from "./common.mjs";

const ANSWERERS = ["tripwire", "scripted", "unreachable", "none"];

/** The scripted human was asked something the scenario gives no answer for (as the
 * reference's harness.answerers.UnscriptedQuestion). */
class UnscriptedQuestion extends Error {
  constructor(message) {
    super(message);
    this.name = "UnscriptedQuestion";
  }
}

/** The scenario's human end: one per scenario, shared by every phase, so its call count spans
 * them all. */
export class Answerer {
  /** `UserQuestionError`: the service build's own class, thrown for a dismissed question. */
  constructor(world, UserQuestionError) {
    this.UserQuestionError = UserQuestionError;
    this.kind = world.answerer ?? "tripwire";
    if (!ANSWERERS.includes(this.kind)) {
      throw new ScenarioError(`world.answerer must be one of ${ANSWERERS.join(", ")}, not ${show(this.kind)}`);
    }
    const answers = world.answers ?? {};
    if (!isObject(answers)) throw new ScenarioError("world.answers must map question ids to answers");
    this.answers = new Map();
    for (const [id, reply] of Object.entries(answers)) {
      // interrupt stops a run, which a direct ask has none of (the loader keeps them apart);
      // dsh/plugins/answerer.mjs carries it out in the assembled scenarios.
      if (reply === "dismiss" || reply === "fail" || reply === "abort" || reply === "interrupt") {
        this.answers.set(id, reply);
        continue;
      }
      const items = Array.isArray(reply) ? reply : [reply];
      if (!items.every((a) => isObject(a) && Array.isArray(a.selected))) {
        throw new ScenarioError(`world.answers.${id} must be {selected: [...], custom?}, a list of them, dismiss, fail, abort or interrupt`);
      }
      this.answers.set(
        id,
        items.map((a) => (a.custom === undefined || a.custom === null ? { id, selected: [...a.selected] } : { id, selected: [...a.selected], custom: a.custom })),
      );
    }
    const delay = world.answer_delay_ms ?? 0;
    this.delayMs = Number.isFinite(delay) && delay > 0 ? delay : 0;
    this.calls = 0;
    this.asked = []; // every call: who asked, and the questions as the scenario spells them
    this.onReached = () => {};
  }

  /** The UserQuestionProvider registered with the service (none for `none`). */
  provider() {
    if (this.kind === "none") return undefined;
    return { ask: (request) => this.ask(request) };
  }

  async ask(request) {
    this.calls += 1;
    this.asked.push({ caller: request.agent?.id ?? null, questions: request.questions.map(fromItem) });
    if (this.kind !== "scripted") {
      // tripwire / unreachable never answer; onReached lets the phase report the hang now
      // instead of waiting for the harness's backstop.
      this.onReached();
      return new Promise(() => {});
    }
    if (this.delayMs) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const questions = request.questions;
    const missing = questions.filter((q) => !this.answers.has(q.id)).map((q) => q.id);
    if (missing.length > 0) {
      throw new UnscriptedQuestion(
        `scripted human has no answer for question(s) ${missing.join(", ")}; add them under world.answers`,
      );
    }
    if (questions.some((q) => this.answers.get(q.id) === "fail")) {
      // A provider that broke: an error that is no UserQuestionError.
      throw new Error("the user-questions provider failed");
    }
    if (questions.some((q) => this.answers.get(q.id) === "abort")) {
      // The provider's wait was aborted: upstream's ASK_ABORTED, passed through unchanged.
      throw new this.UserQuestionError("ask_user_question was aborted before the user answered", "ASK_ABORTED");
    }
    if (questions.some((q) => this.answers.get(q.id) === "dismiss")) {
      // Closing the question rejects the whole wait, as upstream's UI host does.
      throw new this.UserQuestionError("the user cancelled ask_user_question", "ASK_CANCELLED");
    }
    return { answers: questions.flatMap((q) => this.answers.get(q.id).map((a) => ({ ...a, selected: [...a.selected] }))) };
  }
}

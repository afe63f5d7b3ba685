// Cordis plugin: keep the provider's key off the wire. dsh-llm-deepseek 0.1.0-rc.8 refuses to
// start without a non-blank key (MISSING_CREDENTIAL), so the adapter sets a dummy one, and it
// hard-codes `authorization: Bearer <key>` on every request with no option to omit it. This
// wraps globalThis.fetch for the plugin's lifetime: a request to the model's base URL loses
// its authorization header, and one that would still carry the key's value in any header is
// refused outright, so the keyless promise does not rest on the header's name alone.
export const name = "harness-keyless";

export function apply(ctx, config) {
  const { baseURL, keyEnv = "DEEPSEEK_API_KEY" } = config ?? {};
  if (!baseURL) throw new Error("harness-keyless: config.baseURL is required");
  ctx.effect(() => {
    const original = globalThis.fetch;
    const wrapped = function fetch(input, init) {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (typeof url === "string" && url.startsWith(baseURL)) {
        const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
        headers.delete("authorization");
        const key = process.env[keyEnv];
        for (const [header, value] of headers) {
          if (key && value.includes(key)) throw new Error(`harness-keyless: header ${header} would carry the API key`);
        }
        init = { ...(init ?? {}), headers };
      }
      return original.call(globalThis, input, init);
    };
    globalThis.fetch = wrapped;
    return () => {
      if (globalThis.fetch === wrapped) globalThis.fetch = original;
    };
  }, "harness-keyless: wrap fetch");
}

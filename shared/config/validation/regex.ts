import { RE2 } from "re2-wasm";

/**
 * Checks that `pattern` is valid RE2 syntax (what Envoy's safe regex engine accepts); look-arounds,
 * backreferences and possessive quantifiers are rejected. Returns a message when invalid.
 */
export function checkRe2(pattern: string): string | undefined {
  try {
    new RE2(pattern, "u");
    return undefined;
  } catch (e) {
    const detail = e instanceof Error
      ? e.message.replace(/^Invalid regular expression: \/.*\/u: /s, "")
      : String(e);
    return `invalid RE2 regex "${pattern}": ${detail}; see https://github.com/google/re2/wiki/Syntax`;
  }
}

import { childPath } from "./report.ts";
import { quoteExcerpt } from "./excerpt.ts";

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Path of a map entry: `parent.key` for plain keys, `parent["key"]` for keys with dots, slashes or spaces,
 * so that `labels["app.kubernetes.io/name"]` stays unambiguous.
 */
export function mapKeyPath(parent: string, key: string): string {
  return PLAIN_KEY.test(key) ? childPath(parent, key) : `${parent}[${quoteExcerpt(key, 64)}]`;
}

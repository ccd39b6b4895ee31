/** Flow collections (`[`, `{`) nested deeper than this refuse the whole file before it is parsed. */
export const MAX_FLOW_NESTING = 100;

/** Where a text first nests flow collections deeper than allowed. */
export interface NestingProblem {
  /** 1-based line of the collection that went past the limit. */
  readonly line: number;
  /** The limit that was passed. */
  readonly maxDepth: number;
}

const NEWLINE = 10;
const SPACE = 32;
const TAB = 9;
const HASH = 35;
const BACKSLASH = 92;
const DOUBLE = 34;
const SINGLE = 39;
const OPENERS = new Set([91, 123]); // [ {
const CLOSERS = new Set([93, 125]); // ] }
/** Characters after which a quote starts a quoted scalar (otherwise it is part of a plain one: `don't`). */
const BEFORE_QUOTE = new Set([SPACE, TAB, NEWLINE, 44, 58, 45, 63, ...OPENERS]); // , : - ?

/**
 * Finds flow collections nested past `maxDepth` with one linear scan of the text, skipping quoted scalars and
 * comments. The YAML parser takes seconds on a deeply nested file that it then refuses anyway, all of it on the
 * event loop; the scan takes a few milliseconds a megabyte, so such a file is refused before any parsing.
 * Brackets inside plain or block scalars are counted too: only a very unusual text could pass the limit that
 * way, and it would be refused with this message rather than parsed.
 */
export function flowNestingProblem(text: string, maxDepth = MAX_FLOW_NESTING): NestingProblem | undefined {
  let depth = 0;
  let line = 1;
  let quote = 0;
  let previous = NEWLINE;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === NEWLINE) line++;
    if (quote !== 0) {
      if (c === BACKSLASH && quote === DOUBLE) {
        if (text.charCodeAt(++i) === NEWLINE) line++;
      } else if (c === SINGLE && quote === SINGLE && text.charCodeAt(i + 1) === SINGLE) {
        i++;
      } else if (c === quote) quote = 0;
      previous = c;
      continue;
    }
    if (c === HASH && (previous === SPACE || previous === TAB || previous === NEWLINE)) {
      const end = text.indexOf("\n", i);
      if (end < 0) break;
      i = end - 1;
    } else if ((c === DOUBLE || c === SINGLE) && BEFORE_QUOTE.has(previous)) {
      quote = c;
    } else if (OPENERS.has(c)) {
      if (++depth > maxDepth) return { line, maxDepth };
    } else if (CLOSERS.has(c) && depth > 0) {
      depth--;
    }
    previous = c;
  }
  return undefined;
}

/** The rejection message of a file nested too deeply, as `file:line: message`. */
export function nestingError(file: string, problem: NestingProblem): string {
  return `${file}:${problem.line}: YAML nesting: flow collections ([ or {) nest deeper than ` +
    `${problem.maxDepth} levels; the file is refused unparsed`;
}

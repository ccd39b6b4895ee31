/**
 * The parsing half of `go_template.ts`: a template's text split into tokens and read into a tree of nodes.
 * @module
 */
import type { Functions } from "./go_template_functions.ts";

/** A template that cannot be parsed or run; the message names the template and the line. */
export class TemplateError extends Error {
  constructor(readonly source: string, readonly line: number, message: string) {
    super(`${source}:${line}: ${message}`);
    this.name = "TemplateError";
  }
}

/** A node of a parsed template. */
export type Node =
  | { kind: "text"; text: string }
  | { kind: "action"; line: number; pipe: Pipeline }
  | {
    kind: "if";
    line: number;
    branches: { line: number; pipe: Pipeline; body: Node[] }[];
    otherwise: Node[];
  }
  | { kind: "range"; line: number; vars: string[]; pipe: Pipeline; body: Node[]; otherwise: Node[] }
  | { kind: "with"; line: number; pipe: Pipeline; body: Node[]; otherwise: Node[] };

/** A pipeline: commands joined by `|`, maybe declaring or assigning variables. */
export interface Pipeline {
  readonly decl: string[];
  /** The declared variables are assigned (`=`), not declared (`:=`). */
  readonly assign?: boolean;
  readonly commands: Operand[][];
}

/** One word of a command. */
export type Operand =
  | { kind: "field"; base: "dot" | "root" | string; path: string[] }
  | { kind: "literal"; value: unknown }
  | { kind: "ident"; name: string }
  | { kind: "pipe"; pipe: Pipeline };

interface Token {
  readonly text?: string;
  readonly action?: string;
  readonly line: number;
}

/** Splits a template into text and action tokens, applying trim markers and dropping comments. */
export function tokenize(source: string, template: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  let line = 1;
  let trimNext = false;
  while (at < template.length) {
    const open = template.indexOf("{{", at);
    let text = template.slice(at, open < 0 ? undefined : open);
    if (trimNext) text = text.replace(/^\s+/, "");
    trimNext = false;
    if (open < 0) {
      if (text !== "") tokens.push({ text, line });
      break;
    }
    const trimBefore = /^\{\{-\s/.test(template.slice(open, open + 4));
    if (trimBefore) text = text.replace(/\s+$/, "");
    if (text !== "") tokens.push({ text, line });
    line += (template.slice(at, open).match(/\n/g) ?? []).length;
    const close = actionEnd(template, open + 2);
    if (close < 0) throw new TemplateError(source, line, "unclosed action: expected }}");
    let inner = template.slice(open + 2, close);
    if (trimBefore) inner = inner.slice(1);
    if (/\s-$/.test(inner)) {
      inner = inner.slice(0, -1);
      trimNext = true;
    }
    inner = inner.trim();
    if (!(inner.startsWith("/*") && inner.endsWith("*/"))) tokens.push({ action: inner, line });
    line += (template.slice(open, close).match(/\n/g) ?? []).length;
    at = close + 2;
  }
  return tokens;
}

/** Where the action starting at `from` ends (its `}}`), skipping quoted strings as Go's lexer does; -1 if never. */
function actionEnd(template: string, from: number): number {
  const comment = /^(-\s)?\s*\/\*/.exec(template.slice(from, from + 8));
  if (comment) {
    const end = template.indexOf("*/", from + comment[0].length);
    return end < 0 ? -1 : template.indexOf("}}", end);
  }
  for (let at = from; at < template.length; at++) {
    const c = template[at];
    if (c === "}" && template[at + 1] === "}") return at;
    if (c === '"') {
      while (++at < template.length && template[at] !== '"' && template[at] !== "\n") {
        if (template[at] === "\\") at++;
      }
    } else if (c === "`") {
      const end = template.indexOf("`", at + 1);
      if (end < 0) return -1;
      at = end;
    }
  }
  return -1;
}

/** Splits an action into words: strings, parentheses and `|` kept whole. */
function words(source: string, line: number, action: string): string[] {
  const out: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|`[^`]*`|:=|=|[()|,]|[^\s()|,]+)/y;
  let match: RegExpExecArray | null;
  re.lastIndex = 0;
  while (re.lastIndex < action.length && (match = re.exec(action)) !== null) out.push(match[1]);
  if (out.join("").replace(/\s/g, "").length !== action.replace(/\s/g, "").length) {
    throw new TemplateError(source, line, `cannot read the action "${action}"`);
  }
  return out;
}

/** Reads tokens into nodes; a function name must be one of `functions`. */
export class Parser {
  #at = 0;
  constructor(readonly source: string, readonly tokens: Token[], readonly functions: Functions) {}

  parse(): Node[] {
    const nodes = this.#block([]);
    if (this.#at < this.tokens.length) {
      const token = this.tokens[this.#at];
      throw new TemplateError(this.source, token.line, `unexpected {{ ${token.action} }}`);
    }
    return nodes;
  }

  /** Nodes until one of `stops` (returned unconsumed). */
  #block(stops: string[]): Node[] {
    const nodes: Node[] = [];
    while (this.#at < this.tokens.length) {
      const token = this.tokens[this.#at];
      if (token.text !== undefined) {
        nodes.push({ kind: "text", text: token.text });
        this.#at++;
        continue;
      }
      const action = token.action!;
      const keyword = action.split(/\s+/)[0];
      if (stops.includes(keyword)) return nodes;
      this.#at++;
      const rest = action.slice(keyword.length).trim();
      if (keyword === "if") nodes.push(this.#if(token.line, rest));
      else if (keyword === "range") nodes.push(this.#range(token.line, rest));
      else if (keyword === "with") nodes.push(this.#with(token.line, rest));
      else if (keyword === "end" || keyword === "else") {
        throw new TemplateError(this.source, token.line, `{{ ${keyword} }} without an if, range or with`);
      } else if (["define", "template", "block"].includes(keyword)) {
        throw new TemplateError(this.source, token.line, `{{ ${keyword} }} is not supported`);
      } else nodes.push({ kind: "action", line: token.line, pipe: this.#pipeline(token.line, action) });
    }
    if (stops.length > 0) {
      throw new TemplateError(this.source, this.tokens.at(-1)?.line ?? 1, "missing {{ end }}");
    }
    return nodes;
  }

  #end(): string {
    return this.#endToken().action!;
  }

  #endToken(): Token {
    return this.tokens[this.#at++];
  }

  #if(line: number, rest: string): Node {
    const branches = [{ line, pipe: this.#pipeline(line, rest), body: this.#block(["else", "end"]) }];
    let otherwise: Node[] = [];
    while (true) {
      const token = this.#endToken();
      const stop = token.action!;
      if (stop === "end") break;
      const elseIf = stop.match(/^else\s+if\s+(.*)$/s);
      if (elseIf) {
        // An `else if` is reported at its own line, not at its `if`'s.
        const pipe = this.#pipeline(token.line, elseIf[1]);
        branches.push({ line: token.line, pipe, body: this.#block(["else", "end"]) });
        continue;
      }
      otherwise = this.#block(["end"]);
      this.#end();
      break;
    }
    return { kind: "if", line, branches, otherwise };
  }

  #range(line: number, rest: string): Node {
    const pipe = this.#pipeline(line, rest);
    const body = this.#block(["else", "end"]);
    const otherwise = this.#otherwise();
    return {
      kind: "range",
      line,
      vars: pipe.decl,
      pipe: { decl: [], commands: pipe.commands },
      body,
      otherwise,
    };
  }

  /** After a body ended by `else` or `end`: the `else` block up to its `end`, or nothing. */
  #otherwise(): Node[] {
    if (this.#end() === "end") return [];
    const nodes = this.#block(["end"]);
    this.#end();
    return nodes;
  }

  #with(line: number, rest: string): Node {
    const pipe = this.#pipeline(line, rest);
    const body = this.#block(["else", "end"]);
    const otherwise = this.#otherwise();
    return { kind: "with", line, pipe, body, otherwise };
  }

  #pipeline(line: number, text: string): Pipeline {
    const list = words(this.source, line, text);
    let decl: string[] = [];
    const declare = list.indexOf(":=");
    const assign = declare >= 0 ? declare : list.indexOf("=");
    if (assign >= 0) {
      decl = list.slice(0, assign).filter((w) => w !== ",");
      if (decl.length === 0 || decl.length > 2 || !decl.every((v) => /^\$\w+$/.test(v))) {
        throw new TemplateError(this.source, line, `bad variable declaration in "${text}"`);
      }
      list.splice(0, assign + 1);
    }
    const [pipe, used] = this.#commands(line, list, 0);
    if (used !== list.length) throw new TemplateError(this.source, line, `unexpected ")" in "${text}"`);
    if (pipe.length === 0) throw new TemplateError(this.source, line, "empty action");
    return { decl, commands: pipe, assign: assign >= 0 && declare < 0 };
  }

  /** Commands from `list[at]` until the end or a closing parenthesis; returns them and where it stopped. */
  #commands(line: number, list: string[], at: number): [Operand[][], number] {
    const commands: Operand[][] = [[]];
    while (at < list.length && list[at] !== ")") {
      const word = list[at++];
      if (word === "|") {
        commands.push([]);
        continue;
      }
      if (word === "(") {
        const [inner, end] = this.#commands(line, list, at);
        if (list[end] !== ")") throw new TemplateError(this.source, line, "unclosed (");
        commands.at(-1)!.push({ kind: "pipe", pipe: { decl: [], commands: inner } });
        at = end + 1;
        continue;
      }
      commands.at(-1)!.push(this.#operand(line, word));
    }
    if (commands.some((c) => c.length === 0) && commands.length > 1) {
      throw new TemplateError(this.source, line, "empty command in a pipeline");
    }
    return [commands.filter((c) => c.length > 0), at];
  }

  #operand(line: number, word: string): Operand {
    if (word.startsWith('"')) {
      try {
        return { kind: "literal", value: JSON.parse(word) };
      } catch {
        throw new TemplateError(this.source, line, `cannot read the string ${word.slice(0, 40)}`);
      }
    }
    if (word.startsWith("`")) return { kind: "literal", value: word.slice(1, -1) };
    if (/^-?\d+(\.\d+)?$/.test(word)) return { kind: "literal", value: Number(word) };
    if (word === "true" || word === "false") return { kind: "literal", value: word === "true" };
    if (word === "nil") return { kind: "literal", value: undefined };
    if (word === ".") return { kind: "field", base: "dot", path: [] };
    if (word.startsWith(".")) return { kind: "field", base: "dot", path: word.slice(1).split(".") };
    if (word.startsWith("$")) {
      const [name, ...path] = word.split(".");
      return { kind: "field", base: name === "$" ? "root" : name, path };
    }
    if (/^[A-Za-z_]\w*$/.test(word)) {
      if (!Object.hasOwn(this.functions, word)) {
        throw new TemplateError(
          this.source,
          line,
          `unknown function "${word}"; the functions are ${Object.keys(this.functions).sort().join(", ")}`,
        );
      }
      return { kind: "ident", name: word };
    }
    throw new TemplateError(this.source, line, `cannot read "${word}"`);
  }
}

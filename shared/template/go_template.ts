/**
 * The part of Go's `text/template` that proxy bootstrap templates use, so users bring their existing templates
 * (`--templateFile`). `npm:@ctrl/golang-template` was tried first and lacks `range` with variables, pipelines
 * into functions, `eq`, `printf`, `toJSON` and the `{{-`/`-}}` trim markers, so this is our own.
 *
 * Supported: text and `{{ pipeline }}` actions with trim markers and comment actions; `if`/`else if`/
 * `else`, `range` (with `$v :=` or `$i, $v :=`, and `else`), `with`/`else`, each closed by `end`; pipelines
 * `a | f b`; operands `.`, `.a.b`, `$`, `$x`, `$x.a`, string, number, `true`/`false`/`nil` literals and
 * parenthesized pipelines; variable declarations `$x := pipeline` and assignments `$x = pipeline` (to the variable
 * where it was declared, as in Go); a field that holds a function is called, as Go calls a method; functions `and or not eq ne lt le gt ge len
 * index print printf js toJSON toJson default` (`printf` is Go's, in `go_printf.ts`; `toJSON` is Istio's: nil
 * writes `{}`; `toJson` is sprig's: nil writes `null`). As in Go, an unknown function fails when the template
 * is parsed, even in a branch that would not run. Truth is Go's: false, 0, "", nil, empty lists and maps are
 * false. A value that is missing prints as an error naming the template, line and path, with the fields that
 * are there (Go would print `<no value>`, which only breaks the JSON later and further away), unless the caller
 * asks for Go's behaviour with `missingValue`. Callers add their own functions (`GoTemplateOptions.functions`).
 *
 * @module
 */
import { formatValue } from "./go_printf.ts";
import { BUILTIN_FUNCTIONS, type Functions, truthy } from "./go_template_functions.ts";

export { truthy };

/** A template that cannot be parsed or run; the message names the template and the line. */
export class TemplateError extends Error {
  constructor(readonly source: string, readonly line: number, message: string) {
    super(`${source}:${line}: ${message}`);
    this.name = "TemplateError";
  }
}

/** A function a template may call. */
export type GoTemplateFunction = (...args: never[]) => unknown;

/** How a template is parsed and run. */
export interface GoTemplateOptions {
  /** More functions, by name; they replace built-in ones of the same name. */
  readonly functions?: Readonly<Record<string, GoTemplateFunction>>;
  /** What a missing value prints as (Go prints `<no value>`); absent: a missing value is an error. */
  readonly missingValue?: string;
}

type Node =
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

interface Pipeline {
  readonly decl: string[];
  /** The declared variables are assigned (`=`), not declared (`:=`). */
  readonly assign?: boolean;
  readonly commands: Operand[][];
}

type Operand =
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
function tokenize(source: string, template: string): Token[] {
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
    const close = template.indexOf("}}", open + 2);
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

class Parser {
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
    if (word.startsWith('"')) return { kind: "literal", value: JSON.parse(word) };
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

/** Variables of one block; lookups and assignments go outwards to where a variable was declared. */
class Scope {
  readonly vars = new Map<string, unknown>();
  constructor(readonly dot: unknown, readonly parent?: Scope) {}
  with(dot: unknown): Scope {
    return new Scope(dot, this);
  }
  owner(name: string): Scope | undefined {
    return this.vars.has(name) ? this : this.parent?.owner(name);
  }
  has(name: string): boolean {
    return this.owner(name) !== undefined;
  }
  get(name: string): unknown {
    return this.owner(name)?.vars.get(name);
  }
  assign(name: string, value: unknown): boolean {
    const owner = this.owner(name);
    owner?.vars.set(name, value);
    return owner !== undefined;
  }
}

class Runner {
  readonly #out: string[] = [];
  constructor(readonly source: string, readonly functions: Functions, readonly missingValue?: string) {}

  run(nodes: Node[], scope: Scope): string {
    this.#nodes(nodes, scope);
    return this.#out.join("");
  }

  #nodes(nodes: Node[], scope: Scope): void {
    for (const node of nodes) this.#node(node, scope);
  }

  #node(node: Node, scope: Scope): void {
    switch (node.kind) {
      case "text":
        this.#out.push(node.text);
        return;
      case "action": {
        const value = this.#pipe(node.line, node.pipe, scope);
        if (node.pipe.decl.length > 0) return;
        if (value === undefined || value === null) {
          if (this.missingValue !== undefined) {
            this.#out.push(this.missingValue);
            return;
          }
          throw new TemplateError(this.source, node.line, this.#missing(node.pipe, scope));
        }
        this.#out.push(formatValue(value));
        return;
      }
      case "if": {
        const branch = node.branches.find((b) => truthy(this.#pipe(b.line, b.pipe, scope)));
        this.#nodes(branch?.body ?? node.otherwise, scope);
        return;
      }
      case "with": {
        const value = this.#pipe(node.line, node.pipe, scope);
        if (truthy(value)) this.#nodes(node.body, scope.with(value));
        else this.#nodes(node.otherwise, scope);
        return;
      }
      case "range": {
        const value = this.#pipe(node.line, node.pipe, scope);
        const entries: [unknown, unknown][] = Array.isArray(value)
          ? value.map((v, i) => [i, v])
          : typeof value === "object" && value !== null
          ? Object.keys(value).sort().map((k) => [k, (value as Record<string, unknown>)[k]])
          : [];
        if (entries.length === 0) return this.#nodes(node.otherwise, scope);
        for (const [key, item] of entries) {
          const inner = scope.with(item);
          if (node.vars.length === 1) inner.vars.set(node.vars[0], item);
          if (node.vars.length === 2) {
            inner.vars.set(node.vars[0], key);
            inner.vars.set(node.vars[1], item);
          }
          this.#nodes(node.body, inner);
        }
        return;
      }
    }
  }

  /** Says which printed value is missing and, for a field, which fields its parent has. */
  #missing(pipe: Pipeline, scope: Scope): string {
    const [command] = pipe.commands;
    const operand = pipe.commands.length === 1 && command.length === 1 ? command[0] : undefined;
    if (operand?.kind !== "field" || operand.path.length === 0) return "the value printed here is missing";
    const base = operand.base === "dot" ? "" : operand.base === "root" ? "$" : operand.base;
    const name = `${base}.${operand.path.join(".")}`;
    const parent = this.#operand(0, { ...operand, path: operand.path.slice(0, -1) }, scope);
    const fields = typeof parent === "object" && parent !== null && !Array.isArray(parent)
      ? `; the fields there are ${Object.keys(parent).sort().join(", ")}`
      : "";
    return `${name} is missing${fields}`;
  }

  #pipe(line: number, pipe: Pipeline, scope: Scope): unknown {
    let value: unknown;
    pipe.commands.forEach((command, i) => {
      value = this.#command(line, command, scope, i === 0 ? [] : [value]);
    });
    if (pipe.decl.length === 1) {
      if (!pipe.assign) scope.vars.set(pipe.decl[0], value);
      else if (!scope.assign(pipe.decl[0], value)) {
        throw new TemplateError(this.source, line, `undefined variable ${pipe.decl[0]}`);
      }
    }
    return value;
  }

  #command(line: number, command: Operand[], scope: Scope, piped: unknown[]): unknown {
    const [head, ...rest] = command;
    if (head.kind === "ident") {
      // The parser only lets known function names through.
      const fn = this.functions[head.name];
      const args = [...rest.map((o) => this.#operand(line, o, scope)), ...piped];
      try {
        return fn(...args);
      } catch (error) {
        throw new TemplateError(this.source, line, `${head.name}: ${(error as Error).message}`);
      }
    }
    if (rest.length > 0 || piped.length > 0) {
      throw new TemplateError(this.source, line, "a value cannot take arguments; only functions can");
    }
    return this.#operand(line, head, scope);
  }

  #operand(line: number, operand: Operand, scope: Scope): unknown {
    switch (operand.kind) {
      case "literal":
        return operand.value;
      case "pipe":
        return this.#pipe(line, operand.pipe, scope);
      case "ident":
        return this.#command(line, [operand], scope, []);
      case "field": {
        let value: unknown;
        if (operand.base === "dot") value = scope.dot;
        else if (operand.base === "root") value = scope.get("$");
        else if (scope.has(operand.base)) value = scope.get(operand.base);
        else throw new TemplateError(this.source, line, `undefined variable ${operand.base}`);
        for (const key of operand.path) {
          const parent = value;
          value = typeof parent === "object" && parent !== null
            ? (parent as Record<string, unknown>)[key]
            : undefined;
          if (typeof value === "function") value = value.call(parent);
        }
        return value;
      }
    }
  }
}

/**
 * Parses `template` (named `source` in errors) once; the result renders it with any data.
 *
 * @throws {TemplateError} naming the source and line of what cannot be parsed
 */
export function parseGoTemplate(
  source: string,
  template: string,
  options: GoTemplateOptions = {},
): (data: unknown) => string {
  const functions = { ...BUILTIN_FUNCTIONS, ...options.functions } as Functions;
  const nodes = new Parser(source, tokenize(source, template), functions).parse();
  return (data) => {
    const scope = new Scope(data);
    scope.vars.set("$", data);
    return new Runner(source, functions, options.missingValue).run(nodes, scope);
  };
}

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
import {
  type Node,
  type Operand,
  Parser,
  type Pipeline,
  TemplateError,
  tokenize,
} from "./go_template_parse.ts";

export { TemplateError, truthy };

/** A function a template may call. */
export type GoTemplateFunction = (...args: never[]) => unknown;

/** How a template is parsed and run. */
export interface GoTemplateOptions {
  /** More functions, by name; they replace built-in ones of the same name. */
  readonly functions?: Readonly<Record<string, GoTemplateFunction>>;
  /** What a missing value prints as (Go prints `<no value>`); absent: a missing value is an error. */
  readonly missingValue?: string;
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

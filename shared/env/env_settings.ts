import { formatDuration, parseDuration } from "../flags/duration.ts";
import { parseGoBool, parseGoFloat, parseGoInt } from "../flags/scalars.ts";
import { outOfRange } from "./env_ranges.ts";
import { ENV_PREFIXES, ENV_VARS, type EnvType, type EnvVarSpec, type Program } from "./env_vars.ts";
import { notImplementedEnv } from "./not_implemented.ts";

/** A typed value of an environment variable; durations are nanoseconds. */
export type EnvValue = boolean | string | number | bigint;

/** A variable that is set to a value its declared type cannot hold; startup stops with this error. */
export class InvalidEnvError extends Error {
  /** `variable` was set to `value`, which is not a valid `expected`; `cause` is the parse error. */
  constructor(readonly variable: string, readonly value: string, readonly expected: EnvType, cause: unknown) {
    super(`Environment variable ${variable}="${value}" is invalid: expected ${describeType(expected)}`, {
      cause,
    });
    this.name = "InvalidEnvError";
  }
}

/** A variable set to a value of the right type outside its range (`ENV_RANGES`); startup stops with this error. */
export class EnvOutOfRangeError extends InvalidEnvError {
  /** `variable` was set to `value`; `expectation` says what range is accepted. */
  constructor(variable: string, value: string, type: EnvType, readonly expectation: string) {
    super(variable, value, type, undefined);
    this.message = `Environment variable ${variable}="${value}" is out of range: expected ${expectation}`;
    this.name = "EnvOutOfRangeError";
  }
}

/** One resolved variable for display (`/debug/env`): typed value, where it came from. */
export interface ResolvedEnvVar {
  /** Name of the variable. */
  readonly name: string;
  /** Its declared type. */
  readonly type: EnvType;
  /** The typed value as text; durations formatted as Go durations such as `1m30s`. */
  readonly value: string;
  /** Whether the value was set in the environment or is the default. */
  readonly source: "environment" | "default";
  /** What the variable does. */
  readonly description: string;
  /** Present when the variable changes nothing in this program: why, and the issue that will build it. */
  readonly noEffect?: string;
}

/**
 * The environment variables of one program, parsed once at startup and frozen. Accessors check the declared type,
 * so asking for an undeclared variable or the wrong type is a programming error caught by tests.
 */
export class EnvSettings {
  readonly #values = new Map<string, EnvValue>();
  readonly #resolved: ResolvedEnvVar[] = [];
  readonly #prefixed: Readonly<Record<string, string>>;

  /** Parses every variable `program` reads from `environment`; throws InvalidEnvError on the first bad value. */
  constructor(readonly program: Program, environment: Readonly<Record<string, string>>) {
    for (const spec of ENV_VARS) {
      if (!spec.programs.includes(program)) continue;
      const raw = environment[spec.name];
      const text = raw ?? spec.defaultByProgram?.[program] ?? spec.default;
      const value = checkRange(spec, text, parseEnvValue(spec, text));
      this.#values.set(spec.name, value);
      this.#resolved.push({
        name: spec.name,
        type: spec.type,
        value: typeof value === "bigint" ? formatDuration(value) : String(value),
        source: raw === undefined ? "default" : "environment",
        description: spec.description,
        ...noEffect(program, spec.name),
      });
    }
    const prefixed: Record<string, string> = {};
    for (const [name, value] of Object.entries(environment)) {
      if (ENV_PREFIXES.some((p) => name.startsWith(p))) prefixed[name] = value;
    }
    this.#prefixed = Object.freeze(prefixed);
    Object.freeze(this.#resolved);
  }

  /** A boolean variable. */
  bool(name: string): boolean {
    return this.#typed(name, "bool") as boolean;
  }

  /** A string variable. */
  string(name: string): string {
    return this.#typed(name, "string") as string;
  }

  /** An integer variable. */
  int(name: string): number {
    return this.#typed(name, "int") as number;
  }

  /** A floating-point variable. */
  float(name: string): number {
    return this.#typed(name, "float") as number;
  }

  /** A duration variable, in nanoseconds. */
  duration(name: string): bigint {
    return this.#typed(name, "duration") as bigint;
  }

  /** A duration variable, in milliseconds. */
  durationMs(name: string): number {
    return Number(this.duration(name) / 1_000_000n);
  }

  /** Variables of the prefixed families (`MESH_META_*`, `MESH_METAJSON_*`) as set in the environment. */
  prefixed(prefix: string): Readonly<Record<string, string>> {
    if (!ENV_PREFIXES.includes(prefix)) throw new TypeError(`Environment prefix "${prefix}" is not declared`);
    return Object.fromEntries(Object.entries(this.#prefixed).filter(([k]) => k.startsWith(prefix)));
  }

  /** Whether `name` was set in the environment rather than left at its default. */
  isSet(name: string): boolean {
    const resolved = this.#resolved.find((v) => v.name === name);
    if (resolved === undefined) {
      throw new TypeError(`Environment variable ${name} is not read by ${this.program}`);
    }
    return resolved.source === "environment";
  }

  /** Every variable this program reads, resolved, sorted by name. */
  resolved(): readonly ResolvedEnvVar[] {
    return [...this.#resolved].sort((a, b) => a.name.localeCompare(b.name));
  }

  #typed(name: string, type: EnvType): EnvValue {
    const spec = ENV_VARS.find((s) => s.name === name);
    if (!spec) throw new TypeError(`Environment variable ${name} is not declared in the registry`);
    if (spec.type !== type) {
      throw new TypeError(`Environment variable ${name} is a ${spec.type}, not a ${type}`);
    }
    const value = this.#values.get(name);
    if (value === undefined) {
      throw new TypeError(`Environment variable ${name} is not read by ${this.program}`);
    }
    return value;
  }
}

function noEffect(program: Program, name: string): { noEffect?: string } {
  const mark = notImplementedEnv(program, name);
  return mark === undefined ? {} : { noEffect: `${mark.reason} (issue: ${mark.issue})` };
}

/** Parses one variable's text as its declared type. */
function parseEnvValue(spec: EnvVarSpec, text: string): EnvValue {
  try {
    switch (spec.type) {
      case "bool":
        return parseGoBool(text);
      case "int":
        return parseGoInt(text);
      case "float":
        return parseGoFloat(text);
      case "duration":
        return parseDuration(text);
      case "string":
        return text;
    }
  } catch (cause) {
    throw new InvalidEnvError(spec.name, text, spec.type, cause);
  }
}

/** Checks a parsed numeric value against its range; durations are compared in milliseconds. */
function checkRange(spec: EnvVarSpec, text: string, value: EnvValue): EnvValue {
  if (typeof value !== "number" && typeof value !== "bigint") return value;
  const number = typeof value === "bigint" ? Number(value / 1_000_000n) : value;
  const expectation = spec.type === "duration" && value < 0
    ? "a duration of at least 0s"
    : spec.type === "duration"
    ? outOfRange(spec.name, number, (ms) => formatDuration(BigInt(ms) * 1_000_000n), "a duration")
    : outOfRange(spec.name, number);
  if (expectation !== undefined) throw new EnvOutOfRangeError(spec.name, text, spec.type, expectation);
  return value;
}

function describeType(type: EnvType): string {
  switch (type) {
    case "bool":
      return "a boolean (true, false, 1, 0, t, f)";
    case "int":
      return "an integer";
    case "float":
      return "a number";
    case "duration":
      return 'a duration such as "100ms" or "1m0s"';
    case "string":
      return "a string";
  }
}

/** Reads the process environment; the only place in the programs that touches `Deno.env`. */
export function readProcessEnvironment(): Record<string, string> {
  return Deno.env.toObject();
}

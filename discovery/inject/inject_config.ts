/**
 * The injector's two inputs as the reference mounts them: `config` (policy, selectors, injected annotations,
 * default templates, aliases and the templates themselves, YAML) and `values` (the chart values, JSON or YAML).
 * Templates are parsed when the config is read, so a config whose template cannot be parsed is refused whole.
 * @module
 */
import { parse } from "yaml";
import { parseGoTemplate } from "@mesh/shared/template/go_template";
import type { LabelSelector } from "@mesh/shared/config/label_selector";
import type { InjectPolicyConfig } from "./inject_policy.ts";
import { injectionFunctions } from "./template_functions.ts";
import { isObject as isObj } from "@mesh/shared/config/validation/fields";

/** A config or values file that cannot be used; the message says where and what is expected. */
/** Most `render` texts one config keeps parsed. */
const RENDER_MEMO_MAX = 256;

export class InjectConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InjectConfigError";
  }
}

/** A parsed injection template: renders with the template data. */
export type InjectionTemplate = (data: unknown) => string;

/** The injector config, ready to use. */
export interface InjectorConfig extends InjectPolicyConfig {
  readonly defaultTemplates: readonly string[];
  readonly aliases: Readonly<Record<string, readonly string[]>>;
  readonly injectedAnnotations: Readonly<Record<string, string>>;
  readonly templates: Readonly<Record<string, InjectionTemplate>>;
}

function stringRecord(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObj(value) || !Object.values(value).every((v) => typeof v === "string")) {
    throw new InjectConfigError(`${where}: expected a mapping of strings`);
  }
  return value as Record<string, string>;
}

function selectors(value: unknown, where: string): LabelSelector[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isObj)) {
    throw new InjectConfigError(`${where}: expected a list of label selectors`);
  }
  return value as LabelSelector[];
}

/**
 * Reads the injector config (`file` names it in errors); `environment` is what the templates' `env` reads.
 *
 * @throws {InjectConfigError} naming the file and the field or template that is wrong
 */
export function parseInjectorConfig(
  text: string,
  file: string,
  environment: Readonly<Record<string, string>>,
): InjectorConfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    throw new InjectConfigError(`${file}: not YAML: ${(error as Error).message.split("\n")[0]}`, {
      cause: error,
    });
  }
  if (!isObj(doc)) throw new InjectConfigError(`${file}: expected a mapping with policy and templates`);
  const templates: Record<string, InjectionTemplate> = {};
  // `render` renders text with the data of the template running now; rendering is synchronous, so one slot
  // per config holds that data while a template runs.
  const running: { data?: unknown } = {};
  const options = { missingValue: "<no value>" };
  // `render`'s texts are parsed once per config (a pod's injection renders the same few chart values); the
  // memo starts afresh past RENDER_MEMO_MAX in case a template renders text a pod supplies.
  let rendered = new Map<string, ReturnType<typeof parseGoTemplate>>();
  const functions = {
    ...injectionFunctions(environment),
    render: (text: unknown) => {
      try {
        const source = String(text);
        let template = rendered.get(source);
        if (template === undefined) {
          template = parseGoTemplate("render", source, { ...options, functions });
          if (rendered.size >= RENDER_MEMO_MAX) rendered = new Map();
          rendered.set(source, template);
        }
        return template(running.data);
      } catch {
        return "";
      }
    },
  };
  for (const [name, source] of Object.entries(stringRecord(doc.templates, `${file}: templates`))) {
    let template: InjectionTemplate;
    try {
      template = parseGoTemplate(`${file}: template "${name}"`, source, { ...options, functions });
    } catch (error) {
      throw new InjectConfigError((error as Error).message, { cause: error });
    }
    templates[name] = (data) => {
      const outer = running.data;
      running.data = data;
      try {
        return template(data);
      } finally {
        running.data = outer;
      }
    };
  }
  const defaults = doc.defaultTemplates;
  if (
    defaults !== undefined && defaults !== null &&
    !(Array.isArray(defaults) && defaults.every((d) => typeof d === "string"))
  ) {
    throw new InjectConfigError(`${file}: defaultTemplates: expected a list of template names`);
  }
  const aliases = isObj(doc.aliases) ? doc.aliases as Record<string, string[]> : {};
  return Object.freeze({
    policy: String(doc.policy ?? ""),
    defaultTemplates: (defaults as string[] | undefined)?.length ? defaults as string[] : ["sidecar"],
    aliases,
    injectedAnnotations: stringRecord(doc.injectedAnnotations, `${file}: injectedAnnotations`),
    neverInjectSelector: selectors(doc.neverInjectSelector, `${file}: neverInjectSelector`),
    alwaysInjectSelector: selectors(doc.alwaysInjectSelector, `${file}: alwaysInjectSelector`),
    templates,
  });
}

/**
 * Reads the chart values (JSON, or YAML as the reference also accepts).
 *
 * @throws {InjectConfigError} when they are not a mapping
 */
export function parseInjectorValues(text: string, file: string): Readonly<Record<string, unknown>> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    throw new InjectConfigError(`${file}: not JSON or YAML: ${(error as Error).message.split("\n")[0]}`, {
      cause: error,
    });
  }
  if (doc === null || doc === undefined) return {};
  if (!isObj(doc)) throw new InjectConfigError(`${file}: expected a mapping of chart values`);
  return doc;
}

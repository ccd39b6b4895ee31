/**
 * The functions the reference's injection templates call, besides Go's built-ins: its own (`annotation`,
 * `valueOrDefault`, `isset`, `excludeInboundPort`, `includeInboundPorts`, `applicationPorts`, `structToJSON`,
 * `protoToJSON`, `toJSON`, `fromJSON`, `toYaml`, `indent`, `directory`, `contains` with its arguments flipped,
 * `appendMultusNetwork`, `env`, …) and the part of sprig they use (`list`, `append`, `join`, `quote`, `omit`,
 * `strdict`, …; `render`, which needs the running template's data, is added in `inject_config.ts`). Each
 * behaves as the reference's Go function does, including what it returns on bad input.
 * @module
 */
import { stringify } from "yaml";
import type { GoTemplateFunction } from "@mesh/shared/template/go_template";
import { formatValue } from "@mesh/shared/template/go_printf";
import { truthy } from "@mesh/shared/template/go_template";
import { protoToJSON } from "./proxy_config_json.ts";

type Obj = Record<string, unknown>;

const asObj = (value: unknown): Obj => (typeof value === "object" && value !== null ? value as Obj : {});

/** A container port as Go's `corev1.ContainerPort` marshals it: its fields in declaration order, zeros left out. */
function containerPortJson(port: Obj): string {
  const out: Obj = {};
  for (const key of ["name", "hostPort", "containerPort", "protocol", "hostIP"]) {
    if (truthy(port[key]) || key === "containerPort") out[key] = port[key] ?? 0;
  }
  return JSON.stringify(out);
}

/** The ports of `containers` that are not UDP or SCTP, comma-separated. */
function containerPorts(containers: unknown, include: (name: unknown) => boolean): string {
  const ports: string[] = [];
  for (const container of Array.isArray(containers) ? containers : []) {
    const c = container as Obj;
    if (!include(c.Name)) continue;
    for (const port of Array.isArray(c.Ports) ? c.Ports : []) {
      const p = port as Obj;
      if (p.Protocol === "UDP" || p.Protocol === "SCTP") continue;
      ports.push(String(p.ContainerPort));
    }
  }
  return ports.join(",");
}

/** Istio's `excludeInboundPort`: adds `port` to the comma-separated list unless it is empty, 0 or already there. */
function excludeInboundPort(port: unknown, excluded: unknown): string {
  const portText = formatValue(port).trim();
  const list = formatValue(excluded ?? "");
  if (portText === "" || portText === "0") return list;
  const out: string[] = [];
  for (const item of list.split(",")) {
    if (item === portText) return list;
    if (item.trim() !== "") out.push(item.trim());
  }
  return [...out, portText].join(",");
}

/** Istio's `appendMultusNetwork`: adds the CNI network to a flat or JSON `k8s.v1.cni.cncf.io/networks` value. */
function appendMultusNetwork(existing: unknown, network: unknown): string {
  const value = formatValue(existing ?? "");
  const name = formatValue(network);
  if (value === "") return name;
  const close = value.lastIndexOf("]");
  if (close >= 0) {
    let networks: unknown;
    try {
      networks = JSON.parse(value);
    } catch {
      return value;
    }
    if (!Array.isArray(networks)) return value;
    if (networks.some((n) => asObj(n).name === name)) return value;
    return `${value.slice(0, close)}, {"name": "${name}"}${value.slice(close)}`;
  }
  if (value.split(",").some((n) => n.trim() === name)) return value;
  return `${value}, ${name}`;
}

/** Go's `yaml.Marshal` through JSON, as `sigs.k8s.io/yaml` writes it: keys sorted. */
function toYaml(value: unknown): string {
  return stringify(JSON.parse(JSON.stringify(value ?? null)), { sortMapEntries: true, lineWidth: 0 });
}

/** Istio's `indent`: every line but the first gets `spaces` spaces. */
function indent(spaces: unknown, source: unknown): string {
  const pad = " ".repeat(Number(spaces));
  return formatValue(source).split("\n").map((line, i) => (i > 0 ? pad + line : line)).join("\n");
}

/**
 * The longest list `append` builds. Like sprig's, it copies the list each time, and templates append in a loop
 * over a pod's containers: a review of 50,000 containers (0.9 MB) took 8.5 s, one at the 3 MiB cap about
 * 100 s, so one caller's reviews held the injection worker to its 10 s limit, one after another, while every
 * other caller's waited. At this length the copies take about 0.1 s; no pod has that many containers.
 */
export const MAX_APPENDED_ITEMS = 10_000;

/** The functions of injection templates; `env` reads `environment` (the settings), never the process. */
export function injectionFunctions(
  environment: Readonly<Record<string, string>>,
): Readonly<Record<string, GoTemplateFunction>> {
  const functions: Record<string, (...args: never[]) => unknown> = {
    // Istio's own.
    isset: (map: unknown, key: unknown) => Object.hasOwn(asObj(map), String(key)),
    annotation: (meta: unknown, name: unknown, fallback: unknown) => {
      const annotations = asObj(asObj(meta).Annotations);
      return Object.hasOwn(annotations, String(name))
        ? annotations[String(name)]
        : formatValue(fallback ?? "");
    },
    valueOrDefault: (value: unknown, fallback: unknown) =>
      value === "" || value === undefined || value === null ? fallback : value,
    excludeInboundPort,
    includeInboundPorts: (containers: unknown) => containerPorts(containers, () => true),
    applicationPorts: (containers: unknown) => containerPorts(containers, (name) => name !== "mesh-proxy"),
    kubevirtInterfaces: (s: unknown) => s,
    toJSON: goJson,
    toJson: goJson,
    fromJSON: (text: unknown) => {
      try {
        return JSON.parse(formatValue(text));
      } catch {
        return "{}";
      }
    },
    structToJSON: (v: unknown) => {
      if (v === undefined || v === null) return "{}";
      const json = JSON.parse(JSON.stringify(v));
      return typeof json === "object" && json !== null && "containerPort" in json
        ? containerPortJson(json)
        : JSON.stringify(json);
    },
    protoToJSON,
    toYaml,
    indent,
    // Go's path.Split: everything up to the last slash. Not `replace(/[^/]*$/)`, which is quadratic in a long
    // segment followed by a slash, and the path may come from the pod's proxy config annotation.
    directory: (path: unknown) => {
      const text = formatValue(path);
      return text.slice(0, text.lastIndexOf("/") + 1);
    },
    contains: (needle: unknown, haystack: unknown) => formatValue(haystack).includes(formatValue(needle)),
    toLower: (s: unknown) => formatValue(s).toLowerCase(),
    appendMultusNetwork,
    env: (key: unknown, fallback: unknown) => environment[String(key)] || fallback,
    formatDuration: (d: unknown) => formatValue(d ?? "1s"),
    // The part of sprig the templates use.
    list: (...items: unknown[]) => items,
    append: (list: unknown, item: unknown) => {
      const items = Array.isArray(list) ? list : [];
      if (items.length >= MAX_APPENDED_ITEMS) {
        throw new RangeError(
          `the list already has ${items.length} items, as many as a template may build ` +
            `(${MAX_APPENDED_ITEMS})`,
        );
      }
      return [...items, item];
    },
    join: (sep: unknown, list: unknown) =>
      (Array.isArray(list) ? list : [list]).map((v) => formatValue(v ?? "")).join(formatValue(sep)),
    quote: (...args: unknown[]) =>
      args.filter((a) => a !== undefined && a !== null).map((a) => JSON.stringify(formatValue(a))).join(" "),
    squote: (...args: unknown[]) => args.map((a) => `'${formatValue(a ?? "")}'`).join(" "),
    empty: (v: unknown) => !truthy(v),
    hasKey: (map: unknown, key: unknown) => Object.hasOwn(asObj(map), String(key)),
    dict: (...kv: unknown[]) => pairs(kv),
    strdict: (...kv: unknown[]) =>
      Object.fromEntries(Object.entries(pairs(kv)).map(([k, v]) => [k, formatValue(v ?? "")])),
    omit: (map: unknown, ...keys: unknown[]) =>
      Object.fromEntries(Object.entries(asObj(map)).filter(([k]) => !keys.includes(k))),
    toString: (v: unknown) => formatValue(v ?? ""),
    lower: (s: unknown) => formatValue(s).toLowerCase(),
    upper: (s: unknown) => formatValue(s).toUpperCase(),
    trim: (s: unknown) => formatValue(s).trim(),
    hasPrefix: (prefix: unknown, s: unknown) => formatValue(s).startsWith(formatValue(prefix)),
    hasSuffix: (suffix: unknown, s: unknown) => formatValue(s).endsWith(formatValue(suffix)),
    trimSuffix: (suffix: unknown, s: unknown) => {
      const text = formatValue(s);
      return text.endsWith(formatValue(suffix))
        ? text.slice(0, text.length - formatValue(suffix).length)
        : text;
    },
    replace: (from: unknown, to: unknown, s: unknown) =>
      formatValue(s).replaceAll(formatValue(from), formatValue(to)),
    split: (sep: unknown, s: unknown) =>
      Object.fromEntries(formatValue(s).split(formatValue(sep)).map((part, i) => [`_${i}`, part])),
  };
  return functions;
}

/** Go's `json.Marshal` of a map: keys sorted; nil writes `{}` as Istio's `toJSON` does. */
function goJson(value: unknown): string {
  if (value === undefined || value === null) return "{}";
  return JSON.stringify(
    value,
    (_key, v) =>
      typeof v === "object" && v !== null && !Array.isArray(v)
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
        : v,
  );
}

/** Sprig's `dict`: alternating keys and values; a missing last value is `""`. */
function pairs(kv: readonly unknown[]): Obj {
  const out: Obj = {};
  for (let i = 0; i < kv.length; i += 2) out[formatValue(kv[i])] = kv[i + 1] ?? "";
  return out;
}

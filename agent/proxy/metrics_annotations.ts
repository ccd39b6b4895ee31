/**
 * Where the application's metrics are scraped from (`MESH_METRICS_ANNOTATIONS`): the injector copies the
 * pod's `prometheus.io/{scrape,path,port}` annotations into this variable and points Prometheus at the status
 * port, which merges the application's metrics with the proxy's. Parsed and checked once at startup.
 *
 * @module
 */
import { invalidSetting, onlySettingFields, parseJsonSetting, settingObject } from "./json_setting.ts";

/** The variable holding the annotations, as JSON. */
export const METRICS_ANNOTATIONS_VARIABLE = "MESH_METRICS_ANNOTATIONS";

/** The application's metrics endpoint on loopback. */
export interface AppMetricsTarget {
  /** The application's metrics port. */
  readonly port: number;
  /** The metrics path, starting with `/`. */
  readonly path: string;
}

/**
 * Parses the variable's text: undefined when it is empty or does not say `"scrape": "true"`. Defaults follow
 * the annotations' conventions: path `/metrics`, port 80. A port equal to `statusPort` is refused, since the
 * status port would then scrape itself without end. Throws an error naming the variable, the field, what is
 * expected and what was found.
 */
export function parseMetricsAnnotations(text: string, statusPort: number): AppMetricsTarget | undefined {
  if (text.trim() === "") return undefined;
  const where = METRICS_ANNOTATIONS_VARIABLE;
  const expected = 'an object such as {"scrape":"true","path":"/metrics","port":"9090"}';
  const fields = settingObject(parseJsonSetting(where, text, expected), where, expected);
  onlySettingFields(fields, ["scrape", "path", "port"], where);
  const scrape = fields.scrape ?? "false";
  if (scrape !== "true" && scrape !== "false") {
    throw invalidSetting(`${where}.scrape`, '"true" or "false"', scrape);
  }
  const path = fields.path ?? "/metrics";
  if (typeof path !== "string" || path.length > 2048 || !/^\/[\x21-\x7e]*$/.test(path)) {
    throw invalidSetting(
      `${where}.path`,
      "a URL path starting with / of printable ASCII without spaces",
      path,
    );
  }
  const portText = fields.port ?? "80";
  // The annotations are strings; a JSON number is taken too, since it cannot mean anything else.
  const port = typeof portText === "number"
    ? portText
    : typeof portText === "string" && /^\d{1,5}$/.test(portText)
    ? Number(portText)
    : NaN;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) {
    throw invalidSetting(`${where}.port`, 'a port number from 1 to 65535 such as "9090"', portText);
  }
  if (port === statusPort) {
    throw invalidSetting(
      `${where}.port`,
      `a port other than the status port ${statusPort}, which would scrape itself`,
      portText,
    );
  }
  return scrape === "true" ? Object.freeze({ port, path }) : undefined;
}

/**
 * Reads a rendered injection template as the reference does (`yaml.YAMLToJSON`, Go's YAML 1.1 reader): besides
 * YAML 1.2's scalars, `yes`/`no`/`on`/`off`/`y`/`n` are booleans and a leading `0` makes an octal integer.
 * `js-yaml` with those two YAML 1.1 rules added: it reads a rendered template an order of magnitude faster than
 * the `yaml` package (BENCHMARKS.md), and this is the webhook's hot path.
 * @module
 */
import { DEFAULT_SCHEMA, load, Type } from "js-yaml";

// Its own tag, so that it adds to YAML 1.2's booleans instead of replacing them.
const YAML11_BOOL = new Type("tag:mesh.io,2021:yaml11-bool", {
  kind: "scalar",
  resolve: (data: string | null) =>
    data !== null && /^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/.test(data),
  construct: (data: string) => /^(y|Y|yes|Yes|YES|on|On|ON)$/.test(data),
});

const SCHEMA = DEFAULT_SCHEMA.extend({ implicit: [YAML11_BOOL] });

/**
 * The value of a rendered template's YAML.
 *
 * @throws {Error} with the reader's message (line and column) when it is not YAML
 */
export function readRenderedYaml(text: string): unknown {
  return load(text, { schema: SCHEMA });
}

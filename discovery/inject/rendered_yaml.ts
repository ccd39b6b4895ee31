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
 * Nodes a rendered template may stand for once its aliases are followed, past ten times its own: a template
 * of a few hundred nodes stands for a few hundred. The reference's YAML reader refuses "excessive aliasing" in
 * the same spirit.
 */
export const MAX_EXPANDED_NODES = 100_000;

/**
 * The value of a rendered template's YAML.
 *
 * Aliases are read as references to one value, which everything after (the merge into the pod, its copies,
 * the JSON patch) expands: an annotation the template writes unquoted can carry a few lines of anchors and
 * aliases, nine of them each to the line before, that stand for 9⁸ nodes from 800 bytes. So a document whose
 * aliases stand for more than {@link MAX_EXPANDED_NODES} nodes and ten times its own is refused.
 *
 * @throws {Error} with the reader's message (line and column) when it is not YAML, or when its aliases stand
 *   for too many nodes
 */
export function readRenderedYaml(text: string): unknown {
  const value = load(text, { schema: SCHEMA });
  const { expanded, own } = nodeCounts(value);
  if (expanded > MAX_EXPANDED_NODES && expanded > 10 * own) {
    throw new Error(
      `excessive aliasing: the rendered YAML's ${own} nodes stand for ${
        expanded > Number.MAX_SAFE_INTEGER ? "more than 2^53" : expanded
      } once its aliases are followed; at most ${MAX_EXPANDED_NODES}, or ten times its own, are read`,
    );
  }
  return value;
}

/**
 * The nodes `root` stands for with every shared mapping or sequence counted each time it is reached
 * (`expanded`), and counted once (`own`): linear in `own`, however large `expanded` is.
 */
function nodeCounts(root: unknown): { expanded: number; own: number } {
  const sizes = new Map<object, number>();
  let own = 0;
  const size = (value: unknown): number => {
    own++;
    if (value === null || typeof value !== "object") return 1;
    const known = sizes.get(value);
    if (known !== undefined) {
      own--;
      return known;
    }
    // A cycle (an alias inside its own anchor) counts once until its size is known.
    sizes.set(value, 1);
    let total = 1;
    for (const child of Array.isArray(value) ? value : Object.values(value)) total += size(child);
    sizes.set(value, total);
    return total;
  };
  const expanded = size(root);
  return { expanded, own };
}

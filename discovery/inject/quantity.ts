/**
 * Resource quantities in the canonical form the orchestrator's API types write (`2000m` → `2`, `1024Mi` →
 * `1Gi`), as the reference's injector writes them after its pod round-trips through those types.
 * @module
 */

const BINARY: readonly [string, bigint][] = [
  ["Ei", 2n ** 60n],
  ["Pi", 2n ** 50n],
  ["Ti", 2n ** 40n],
  ["Gi", 2n ** 30n],
  ["Mi", 2n ** 20n],
  ["Ki", 2n ** 10n],
];
const DECIMAL: readonly [string, bigint][] = [
  ["E", 10n ** 18n],
  ["P", 10n ** 15n],
  ["T", 10n ** 12n],
  ["G", 10n ** 9n],
  ["M", 10n ** 6n],
  ["k", 10n ** 3n],
];

/** The canonical spelling of `quantity`, or `quantity` itself when it is not one this function reads. */
export function canonicalQuantity(quantity: unknown): unknown {
  if (typeof quantity !== "string" && typeof quantity !== "number") return quantity;
  const match = /^(\d+)(?:\.(\d+))?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.exec(String(quantity));
  if (!match) return quantity;
  const [, whole, fraction = "", suffix = ""] = match;
  const binary = BINARY.find(([s]) => s === suffix);
  if (binary !== undefined) {
    if (fraction !== "") return quantity;
    const bytes = BigInt(whole) * binary[1];
    const fit = BINARY.find(([, size]) => bytes % size === 0n);
    return fit ? `${bytes / fit[1]}${fit[0]}` : String(bytes);
  }
  const scale = suffix === "m" ? 1n : (DECIMAL.find(([s]) => s === suffix)?.[1] ?? 1n) * 1000n;
  const digits = withoutTrailingZeros(fraction);
  if (digits.length > 18) return quantity;
  const milli = (BigInt(whole + digits) * scale) / 10n ** BigInt(digits.length);
  if (milli % 1000n !== 0n) return `${milli}m`;
  const units = milli / 1000n;
  if (units === 0n) return "0";
  const fit = DECIMAL.find(([, size]) => units % size === 0n);
  return fit ? `${units / fit[1]}${fit[0]}` : String(units);
}

/**
 * `digits` without its trailing zeros. Not `replace(/0+$/)`: a regular expression tries that from every zero of a
 * run that does not end the string, so a fraction of 60,000 zeros and a one took 1.2 s of the event loop.
 */
function withoutTrailingZeros(digits: string): string {
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30) end--;
  return digits.slice(0, end);
}

/** Rewrites every `resources.requests`/`limits` quantity of `containers` in canonical form. */
export function canonicalResources(containers: readonly Record<string, unknown>[] | undefined): void {
  for (const container of containers ?? []) {
    const resources = container.resources as Record<string, Record<string, unknown> | undefined> | undefined;
    for (const kind of ["requests", "limits"]) {
      const amounts = resources?.[kind];
      if (amounts === undefined || amounts === null) continue;
      for (const [name, value] of Object.entries(amounts)) amounts[name] = canonicalQuantity(value);
    }
  }
}

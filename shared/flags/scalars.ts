/** Parsers for the scalar types of Go's flag and env packages, shared by flags and environment variables. */

const TRUE_WORDS = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Parses a boolean as Go's `strconv.ParseBool` does; throws TypeError otherwise. */
export function parseGoBool(text: string): boolean {
  if (TRUE_WORDS.has(text)) return true;
  if (FALSE_WORDS.has(text)) return false;
  throw new TypeError(`Invalid boolean "${text}": expected one of 1, t, true, 0, f, false`);
}

/** Parses a base-10 integer within [min, max]; throws RangeError naming the value otherwise. */
export function parseGoInt(
  text: string,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (!/^[+-]?\d+$/.test(text.trim())) {
    throw new RangeError(`Invalid integer "${text}": expected a whole number`);
  }
  const value = Number(text.trim());
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`Invalid integer "${text}": expected a value from ${min} to ${max}`);
  }
  return value;
}

/** Parses a uint16 (0..65535), as ports are. */
export function parseUint16(text: string): number {
  return parseGoInt(text, 0, 65535);
}

/** Parses a floating-point number the way Go's ParseFloat accepts common forms. */
export function parseGoFloat(text: string): number {
  const trimmed = text.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) && !/^[+-]?(Inf|inf|NaN)$/.test(trimmed)) {
    throw new RangeError(`Invalid number "${text}": expected a decimal number such as "20" or "0.5"`);
  }
  if (/inf$/i.test(trimmed)) return trimmed.startsWith("-") ? -Infinity : Infinity;
  return Number(trimmed);
}

/** Parses a float32 flag value; rejects magnitudes a float32 cannot hold. */
export function parseFloat32(text: string): number {
  const value = parseGoFloat(text);
  if (Number.isFinite(value) && Math.abs(value) > 3.4028234663852886e38) {
    throw new RangeError(`Invalid number "${text}": out of float32 range`);
  }
  return Math.fround(value);
}

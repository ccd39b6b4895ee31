/**
 * Test support: waiting for something another process does.
 *
 * @module
 */

/**
 * Calls `fn` every 200 ms until it returns a value (not undefined); errors count as "not yet".
 *
 * @throws {Error} after `timeoutMs`, naming `what` and the last error
 */
export async function poll<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}

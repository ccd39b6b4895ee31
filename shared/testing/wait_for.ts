/**
 * Test support: waiting for something that happens on its own time (a file event, a socket, a push).
 *
 * @module
 */

/**
 * Polls `condition` every `intervalMs` until it holds; fails after `timeoutMs` naming what was awaited. A
 * bound on waiting for real events, never a timing assertion.
 *
 * @throws {Error} `Timed out after <timeoutMs> ms waiting for <what>`
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

import type { CommandSpec } from "@mesh/shared/cli/command_spec";
import { WAIT_FLAGS } from "./flags.ts";

/** Polls a readiness URL until it answers 200, or gives up after a deadline. */
export async function waitUntilReady(
  url: string,
  options: { periodMs: number; requestTimeoutMs: number; timeoutMs: number },
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  now: () => number = () => performance.now(),
): Promise<{ ready: boolean; attempts: number; lastError: string }> {
  const deadline = now() + options.timeoutMs;
  let attempts = 0;
  let lastError = "no attempt made";
  while (true) {
    attempts++;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(options.requestTimeoutMs) });
      await response.body?.cancel();
      if (response.status === 200) return { ready: true, attempts, lastError: "" };
      lastError = `status ${response.status}`;
    } catch (error) {
      lastError = (error as Error)?.message ?? String(error);
    }
    if (now() + options.periodMs > deadline) return { ready: false, attempts, lastError };
    await sleep(options.periodMs);
  }
}

/** `mesh-agent wait`: waits until the proxy reports ready. */
export const waitCommand: CommandSpec = {
  name: "wait",
  summary: "Waits until the proxy is ready",
  flags: WAIT_FLAGS,
  async run(ctx) {
    const url = ctx.flags.url as string;
    const timeoutSeconds = ctx.flags.timeoutSeconds as number;
    ctx.io.stdout(`Waiting for the proxy to be ready (timeout: ${timeoutSeconds} seconds)...\n`);
    const result = await waitUntilReady(url, {
      periodMs: ctx.flags.periodMillis as number,
      requestTimeoutMs: ctx.flags.requestTimeoutMillis as number,
      timeoutMs: timeoutSeconds * 1000,
    });
    if (result.ready) {
      ctx.io.stdout(`The proxy is ready after ${result.attempts} attempt(s)\n`);
      return 0;
    }
    ctx.io.stderr(
      `Error: timeout waiting for the proxy to become ready at ${url} after ${timeoutSeconds}s ` +
        `(${result.attempts} attempts); last error: ${result.lastError}\n`,
    );
    return 1;
  },
};

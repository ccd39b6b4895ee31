/**
 * The line protocol between the benchmark controller and its subprocesses (load agent, baseline server):
 * one JSON object per line on stdin (commands) and stdout (replies), plus a reader for such lines.
 *
 * @module
 */

/** A command to the load agent. */
export type AgentCommand =
  | { readonly cmd: "connect"; readonly timeoutMs: number }
  | { readonly cmd: "reconnect"; readonly timeoutMs: number }
  | { readonly cmd: "record" }
  | {
    readonly cmd: "await";
    /** Epoch ms of the change; arrivals at or after it count. */
    readonly since: number;
    /** Type URLs every proxy must receive. */
    readonly types: readonly string[];
    readonly timeoutMs: number;
    /** After all arrived, keep counting arrivals this long (to see which types a push sent). */
    readonly settleMs: number;
  }
  | { readonly cmd: "capture"; readonly dir: string }
  | { readonly cmd: "inspect"; readonly typeUrl: string; readonly name: string }
  | { readonly cmd: "close" };

/** The agent's answer to `connect` and `reconnect`. */
export interface ConnectReply {
  readonly started: number;
  /** Per proxy that got a full configuration: ms from the start of the storm. */
  readonly latencies: readonly number[];
  readonly incomplete: number;
  /** Streams re-opened after UNAVAILABLE before their first configuration. */
  readonly retries: number;
  /** Their status details, counted. */
  readonly retryReasons?: Readonly<Record<string, number>>;
  /** Streams that ended, by status code. */
  readonly ended: Readonly<Record<string, number>>;
  readonly bytes: number;
}

/** The agent's answer to `await`. */
export interface AwaitReply {
  /** Per converged proxy: ms from `since` to the last of the first arrivals of each type. */
  readonly latencies: readonly number[];
  /** Proxies that did not converge in time. */
  readonly missing: number;
  /** Arrivals per short type name (CDS, EDS, …) from `since` until the end of the settle time. */
  readonly arrivals: Readonly<Record<string, number>>;
  readonly bytes: number;
  /** First arrival of any type at any proxy, ms after `since`. */
  readonly firstMs: number;
  /** Streams that have ended so far, by status code. */
  readonly ended: Readonly<Record<string, number>>;
}

/** Splits a byte stream into lines and yields each parsed as JSON; other lines go to `other`. */
export async function* jsonLines(
  stream: ReadableStream<Uint8Array>,
  other: (line: string) => void = () => {},
): AsyncGenerator<Record<string, unknown>> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line === "") continue;
      if (!line.startsWith("{")) {
        other(line);
        continue;
      }
      try {
        yield JSON.parse(line);
      } catch {
        other(line);
      }
    }
  }
}

/** A subprocess spoken to in JSON lines: write a command, read the next JSON reply. */
export class LineChannel {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #replies: AsyncGenerator<Record<string, unknown>>;
  readonly #encoder = new TextEncoder();

  constructor(readonly child: Deno.ChildProcess, other: (line: string) => void) {
    this.#writer = child.stdin.getWriter();
    this.#replies = jsonLines(child.stdout, other);
  }

  /** Sends a command and waits for the next reply; fails if the process closes its output first. */
  async request<T>(command: Record<string, unknown>): Promise<T> {
    await this.send(command);
    return await this.next<T>();
  }

  /** Sends a command without waiting. */
  async send(command: Record<string, unknown>): Promise<void> {
    await this.#writer.write(this.#encoder.encode(JSON.stringify(command) + "\n"));
  }

  /** The next JSON reply. */
  async next<T>(): Promise<T> {
    const { value, done } = await this.#replies.next();
    if (done) throw new Error("Subprocess closed its output before replying");
    if (typeof value.error === "string") throw new Error(`Subprocess failed: ${value.error}`);
    return value as T;
  }

  /** Ends the subprocess at once (SIGTERM) and waits for it. */
  async kill(): Promise<Deno.CommandStatus> {
    try {
      this.child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    return await this.child.status;
  }

  /** Closes stdin (the subprocess exits on end of input) and waits for the exit status. */
  async close(): Promise<Deno.CommandStatus> {
    try {
      await this.#writer.close();
    } catch {
      // Already closed.
    }
    return await this.child.status;
  }
}

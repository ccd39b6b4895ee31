/** Where formatted log lines go: stdout, stderr or a file. Writes are synchronous so nothing is lost on exit. */
export interface LogSink {
  /** Writes one formatted line (newline included) before returning. */
  write(line: string): void;
  /** Releases the sink's file, if any; later writes are an error. */
  close(): void;
}

const encoder = new TextEncoder();

/** Writes to the process's stdout or stderr. */
export class StdSink implements LogSink {
  /** A sink on `stream`; it is never closed. */
  constructor(private readonly stream: "stdout" | "stderr") {}

  /** Writes all of `line` to the stream, synchronously. */
  write(line: string): void {
    const bytes = encoder.encode(line);
    const target = this.stream === "stdout" ? Deno.stdout : Deno.stderr;
    let written = 0;
    while (written < bytes.length) written += target.writeSync(bytes.subarray(written));
  }

  /** Does nothing: the process's standard streams stay open. */
  close(): void {}
}

/** Appends to a file, creating it (and nothing else) when missing. */
export class FileSink implements LogSink {
  #file: Deno.FsFile;

  /** Opens `path` for appending at once; throws when it cannot be opened. */
  constructor(readonly path: string) {
    this.#file = Deno.openSync(path, { append: true, create: true });
  }

  /** Appends all of `line` to the file, synchronously. */
  write(line: string): void {
    const bytes = encoder.encode(line);
    let written = 0;
    while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
  }

  /** Closes the file. */
  close(): void {
    this.#file.close();
  }
}

/** Builds the sink for one `--log_target` value: `stdout`, `stderr`, or a file path. */
export function sinkForTarget(target: string): LogSink {
  if (target === "stdout" || target === "stderr") return new StdSink(target);
  return new FileSink(target);
}

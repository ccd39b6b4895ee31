/** Where formatted log lines go: stdout, stderr or a file. Writes are synchronous so nothing is lost on exit. */
export interface LogSink {
  write(line: string): void;
  close(): void;
}

const encoder = new TextEncoder();

/** Writes to the process's stdout or stderr. */
export class StdSink implements LogSink {
  constructor(private readonly stream: "stdout" | "stderr") {}

  write(line: string): void {
    const bytes = encoder.encode(line);
    const target = this.stream === "stdout" ? Deno.stdout : Deno.stderr;
    let written = 0;
    while (written < bytes.length) written += target.writeSync(bytes.subarray(written));
  }

  close(): void {}
}

/** Appends to a file, creating it (and nothing else) when missing. */
export class FileSink implements LogSink {
  #file: Deno.FsFile;

  constructor(readonly path: string) {
    this.#file = Deno.openSync(path, { append: true, create: true });
  }

  write(line: string): void {
    const bytes = encoder.encode(line);
    let written = 0;
    while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
  }

  close(): void {
    this.#file.close();
  }
}

/** Builds the sink for one `--log_target` value: `stdout`, `stderr`, or a file path. */
export function sinkForTarget(target: string): LogSink {
  if (target === "stdout" || target === "stderr") return new StdSink(target);
  return new FileSink(target);
}

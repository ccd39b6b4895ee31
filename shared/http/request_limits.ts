import { HttpError } from "./router.ts";

/** Bounds on one request body. */
export interface BodyLimits {
  /** Largest body accepted, in bytes; a larger one is refused with 413 without reading the rest. */
  readonly maxBytes: number;
  /** Longest the whole body may take to arrive; a slower one is refused with 408. */
  readonly timeoutMs: number;
  /** Media types accepted (`application/json`); checked before any byte of the body is read (415). */
  readonly contentTypes?: readonly string[];
}

/** Bodies of admin and debug requests (log levels, small JSON objects). */
export const ADMIN_BODY_LIMITS: BodyLimits = Object.freeze({
  maxBytes: 64 * 1024,
  timeoutMs: 10_000,
});

/**
 * Reads a request body as text within `limits`: the content type is checked first, then the declared length,
 * then the bytes as they arrive, so an oversized or slow body is refused without being held in memory.
 * Throws {@link HttpError} (415, 413, 408) whose message names the limit, never the input. A refused body is
 * read to its end and dropped ({@link discardBody}; up to twice `maxBytes`, within `timeoutMs`) before the
 * error is thrown: over HTTP/2 an answer sent while the client is still sending resets the stream, and some
 * clients then lose the answer.
 */
export async function readBodyText(request: Request, limits: BodyLimits): Promise<string> {
  const refuse = async (error: HttpError, alreadyRead = 0): Promise<never> => {
    await discardBody(request, 2 * limits.maxBytes - alreadyRead, limits.timeoutMs);
    throw error;
  };
  if (limits.contentTypes) {
    const type = mediaType(request.headers.get("content-type"));
    if (!limits.contentTypes.includes(type)) {
      await refuse(
        new HttpError(415, `Unsupported content type: expected ${limits.contentTypes.join(" or ")}`),
      );
    }
  }
  const declared = Number(request.headers.get("content-length") ?? "0");
  // Far more than allowed is not read at all: the client learns of it as a reset stream at worst.
  if (declared > 2 * limits.maxBytes) throw tooLarge(limits.maxBytes);
  if (declared > limits.maxBytes) await refuse(tooLarge(limits.maxBytes));
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HttpError(408, `Request body not received within ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
  });
  try {
    while (true) {
      const { done, value } = await Promise.race([reader.read(), timedOut]);
      if (done) break;
      size += value.byteLength;
      if (size > limits.maxBytes) break;
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (size > limits.maxBytes) {
    chunks.length = 0;
    reader.releaseLock();
    await refuse(tooLarge(limits.maxBytes), size);
  }
  return decodeChunks(chunks, size);
}

/** How long a refused body may pause before the answer goes out anyway: the client may be waiting for it. */
export const DISCARD_QUIET_MS = 200;

/**
 * Reads what is left of `request`'s body and drops it, so the answer is not sent while the client is still
 * sending. It stops reading at the body's end, past `maxBytes`, past `timeoutMs`, or when no byte comes for
 * {@link DISCARD_QUIET_MS} (a client that waits for the answer before sending); past `maxBytes` or
 * `timeoutMs` the body is cancelled (the client then sees its stream reset, the price of sending far more
 * than allowed). A body already read, or being read, is left alone.
 */
export async function discardBody(request: Request, maxBytes: number, timeoutMs: number): Promise<void> {
  if (!request.body || request.body.locked || request.bodyUsed) return;
  const reader = request.body.getReader();
  const deadline = performance.now() + timeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let left = maxBytes;
  try {
    while (true) {
      const wait = Math.min(DISCARD_QUIET_MS, deadline - performance.now());
      const next = await Promise.race([
        reader.read(),
        new Promise<"quiet">((resolve) => timer = setTimeout(() => resolve("quiet"), Math.max(0, wait))),
      ]);
      clearTimeout(timer);
      if (next === "quiet") {
        if (performance.now() >= deadline) await reader.cancel();
        return;
      }
      if (next.done) return;
      left -= next.value.byteLength;
      if (left < 0) return await reader.cancel();
    }
  } catch {
    // the client went away, or the body was refused on the way: nothing left to drop
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}

/** The UTF-8 text of `chunks` (`size` bytes in all), joined. */
export function decodeChunks(chunks: readonly Uint8Array[], size: number): string {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** The media type of a `content-type` header, lower case, without parameters; "" when absent. */
export function mediaType(header: string | null): string {
  return (header ?? "").split(";")[0].trim().toLowerCase();
}

/**
 * A value from a request, fit to appear in an error reply: short identifier-like strings are quoted, anything
 * else is described by its type and size, so that a reply never carries a caller's payload back.
 */
export function describeInput(value: unknown): string {
  if (typeof value === "string") {
    return value.length <= 64 && /^[\w.:/@-]*$/.test(value)
      ? JSON.stringify(value)
      : `a string of ${value.length} characters`;
  }
  if (value === null || typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === undefined) return "undefined";
  return Array.isArray(value)
    ? "an array"
    : `a${typeof value === "object" ? "n object" : ` ${typeof value}`}`;
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `Request body is larger than ${maxBytes} bytes`);
}

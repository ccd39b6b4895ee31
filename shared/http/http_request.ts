/** The outcome of `request <method> <path> [body]`. */
export interface RequestResult {
  /** True for a 2xx status. */
  readonly ok: boolean;
  /** The HTTP status. */
  readonly status: number;
  /** The response body as text. */
  readonly body: string;
}

/** Nothing answered at the address (connection refused, unreachable). */
export class NotListeningError extends Error {
  /** `url` is the address tried; `cause` is the fetch failure. */
  constructor(readonly url: string, cause: unknown) {
    super(`Nothing is listening at ${url}: ${rootMessage(cause)}`, { cause });
    this.name = "NotListeningError";
  }
}

/** Sends one HTTP request to a local admin or monitoring address; throws NotListeningError when none answers. */
export async function sendAdminRequest(
  baseUrl: string,
  method: string,
  path: string,
  body?: string,
  timeoutMs = 10_000,
): Promise<RequestResult> {
  const url = new URL(path.startsWith("/") ? path : `/${path}`, baseUrl).toString();
  let response: Response;
  try {
    response = await fetch(url, {
      method: method.toUpperCase(),
      body: body === undefined || body === "" ? undefined : body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    if (error instanceof TypeError || (error as Error)?.name === "ConnectionRefused") {
      throw new NotListeningError(url, error);
    }
    throw error;
  }
  return { ok: response.ok, status: response.status, body: await response.text() };
}

function rootMessage(error: unknown): string {
  let current = error as { message?: string; cause?: unknown } | undefined;
  while (current?.cause instanceof Error) current = current.cause as Error;
  return current?.message ?? String(error);
}

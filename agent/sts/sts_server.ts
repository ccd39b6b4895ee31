/**
 * The agent's Security Token Service on `--stsPort` (loopback only): RFC 8693 token exchange at the reference's
 * `/token` (POST, `application/x-www-form-urlencoded`, `grant_type` token exchange, a JWT `subject_token`),
 * answered by the `--tokenManagerPlugin`; `/stsStatus` shows the tokens the plugin holds, without the tokens.
 * Used by the proxy's gRPC call credentials (`CALL_CREDENTIALS`) and by telemetry exporters.
 *
 * An invalid request is 400 `invalid_request`; a plugin that cannot issue one is 500 `invalid_target`, as the
 * reference answers. The reason goes in `error_description` and never quotes the request back.
 *
 * @module
 */
import { type RunningServer, serveHttp } from "@mesh/shared/http/serve";
import { jsonResponse, Router } from "@mesh/shared/http/router";
import type { Logger } from "@mesh/shared/log/logger";
import type { StsRequest, TokenExchangePlugin } from "./token_exchange.ts";

/** The reference's token path. */
export const STS_TOKEN_PATH = "/token";
/** The reference's status path. */
export const STS_STATUS_PATH = "/stsStatus";
/** The only grant type accepted. */
export const TOKEN_EXCHANGE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange";
/** The only subject token type accepted. */
export const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
const FORM = "application/x-www-form-urlencoded";
/** A form larger than this is no token exchange (a JWT is a few KiB). */
const MAX_FORM_BYTES = 64 * 1024;

/** Why a request is not a token exchange; its message is the `error_description`. */
export class InvalidStsRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidStsRequestError";
  }
}

/** A short, printable excerpt of a value a client sent, for an error description. */
function shown(value: string | null): string {
  if (value === null || value === "") return "nothing";
  return /^[\w.:/-]{1,100}$/.test(value) ? `"${value}"` : `a value of ${value.length} characters`;
}

/**
 * Checks a `/token` request as the reference does and returns its parameters.
 *
 * @throws {InvalidStsRequestError} naming what is wrong and what is expected
 */
export async function parseStsRequest(request: Request): Promise<StsRequest> {
  if (request.method !== "POST") {
    throw new InvalidStsRequestError(`The request method must be POST, not ${shown(request.method)}`);
  }
  const type = request.headers.get("content-type")?.split(";")[0].trim() ?? null;
  if (type !== FORM) throw new InvalidStsRequestError(`The content type must be ${FORM}, not ${shown(type)}`);
  const length = Number(request.headers.get("content-length") ?? "0");
  if (length > MAX_FORM_BYTES) {
    await request.body?.cancel();
    throw new InvalidStsRequestError(`The form has ${length} bytes; at most ${MAX_FORM_BYTES} are read`);
  }
  const text = await request.text();
  if (text.length > MAX_FORM_BYTES) {
    throw new InvalidStsRequestError(`The form has ${text.length} bytes; at most ${MAX_FORM_BYTES} are read`);
  }
  const form = new URLSearchParams(text);
  const field = (name: string) => form.get(name) ?? "";
  if (field("grant_type") !== TOKEN_EXCHANGE_GRANT_TYPE) {
    throw new InvalidStsRequestError(
      `grant_type must be ${TOKEN_EXCHANGE_GRANT_TYPE}, not ${shown(form.get("grant_type"))}`,
    );
  }
  if (field("subject_token") === "") throw new InvalidStsRequestError("subject_token is empty");
  if (field("subject_token_type") !== JWT_TOKEN_TYPE) {
    throw new InvalidStsRequestError(
      `subject_token_type must be ${JWT_TOKEN_TYPE}, not ${shown(form.get("subject_token_type"))}`,
    );
  }
  return {
    grantType: field("grant_type"),
    subjectToken: field("subject_token"),
    subjectTokenType: field("subject_token_type"),
    resource: field("resource"),
    audience: field("audience"),
    scope: field("scope"),
    requestedTokenType: field("requested_token_type"),
    actorToken: field("actor_token"),
    actorTokenType: field("actor_token_type"),
  };
}

function stsError(status: number, error: string, description: string): Response {
  return jsonResponse({ error, error_description: description, error_uri: "" }, status);
}

/** The STS routes, without a socket. */
export function stsRouter(plugin: TokenExchangePlugin, log: Logger): Router {
  const router = new Router();
  router.add(STS_TOKEN_PATH, "RFC 8693 token exchange (POST, form encoded)", async (request) => {
    let parameters: StsRequest;
    try {
      parameters = await parseStsRequest(request);
    } catch (error) {
      if (!(error instanceof InvalidStsRequestError)) throw error;
      log.warn("STS request is invalid", { error: error.message });
      return stsError(400, "invalid_request", error.message);
    }
    try {
      return jsonResponse(await plugin.exchange(parameters));
    } catch (error) {
      const message = (error as Error).message;
      log.warn("the token manager plugin could not issue a token", { error: message });
      return stsError(500, "invalid_target", message);
    }
  }, ["POST", "GET", "PUT", "DELETE", "PATCH"]);
  router.add(STS_STATUS_PATH, "The tokens the plugin holds (types and lifetimes, never the tokens)", () => {
    return jsonResponse({ tokens: plugin.status() });
  });
  return router;
}

/** Serves STS on `hostname:port` (the loopback address of the proxy's IP family). */
export async function startStsServer(
  hostname: string,
  port: number,
  plugin: TokenExchangePlugin,
  log: Logger,
): Promise<RunningServer> {
  return await serveHttp(
    "sts",
    { hostname, port },
    stsRouter(plugin, log).handle,
    log,
    undefined,
    "--stsPort",
  );
}

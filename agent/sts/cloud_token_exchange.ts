/**
 * `--tokenManagerPlugin=CloudTokenExchange`, the reference's `GoogleTokenExchange`: the workload's JWT is
 * exchanged at the cloud's security token service for a federated token (audience
 * `identitynamespace:<the JWT's one audience, else TRUST_DOMAIN>:<CLOUD_CLUSTER_URL>`), which is exchanged at
 * the IAM credentials service for an hour's access token of the project's mesh data plane service account. The
 * access token is kept and handed out again until five minutes before it expires.
 *
 * Upstream calls time out after 5 s and are tried up to 5 times unless answered 4xx; each is counted in
 * `num_outgoing_requests{request_type="token_exchange"}` (failures, retries and latency beside it).
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import {
  ACCESS_TOKEN_TYPE,
  type HeldToken,
  type StsRequest,
  type StsTokenResponse,
  type TokenExchangePlugin,
} from "./token_exchange.ts";

/** The cloud's endpoints, as the reference calls them; `%s` in `accessToken` is the project number. */
export const CLOUD_ENDPOINTS = Object.freeze({
  federatedToken: "https://securetoken.googleapis.com/v1/identitybindingtoken",
  accessToken: "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/" +
    "service-%s@gcp-sa-meshdataplane.iam.gserviceaccount.com:generateAccessToken",
});

const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const TIMEOUT_MS = 5_000;
const MAX_TRIES = 5;
/** A kept access token is handed out until this long before it expires. */
const GRACE_MS = 300_000;
/** The life assumed when the access token response gives none that parses. */
const DEFAULT_LIFE_MS = 3_600_000;
const TOKEN_EXCHANGE = { request_type: "token_exchange" };

/** What the plugin needs. */
export interface CloudTokenExchangeOptions {
  /** `TRUST_DOMAIN`: the identity namespace when the subject token does not name one audience. */
  readonly trustDomain: string;
  /** The project number (`CLOUD_METADATA`'s second field). */
  readonly projectNumber: string;
  /** `CLOUD_CLUSTER_URL`: the identity provider in the federated token's audience. */
  readonly clusterUrl: string;
  /** Where the two exchanges go; default {@link CLOUD_ENDPOINTS}. */
  readonly endpoints?: { readonly federatedToken: string; readonly accessToken: string };
  readonly metrics?: Metrics;
  readonly log: Logger;
  /** Wall-clock milliseconds; default `Date.now`. */
  readonly now?: () => number;
}

/** The one non-empty audience of an (unverified) JWT, if it names exactly one. */
function singleAudience(jwt: string): string | undefined {
  try {
    const payload = JSON.parse(atob(jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))) as {
      aud?: unknown;
    };
    const audiences = typeof payload.aud === "string" ? [payload.aud] : payload.aud;
    return Array.isArray(audiences) && audiences.length === 1 && typeof audiences[0] === "string" &&
        audiences[0] !== ""
      ? audiences[0]
      : undefined;
  } catch {
    return undefined;
  }
}

/** The reference's Google token exchange, renamed. */
export class CloudTokenExchange implements TokenExchangePlugin {
  readonly #options: CloudTokenExchangeOptions;
  readonly #now: () => number;
  #federated?: { issued: number; expires: number };
  #access?: { token: string; issued: number; expires: number };

  constructor(options: CloudTokenExchangeOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async exchange(request: StsRequest): Promise<StsTokenResponse> {
    const kept = this.#access;
    if (kept !== undefined && kept.expires - this.#now() > GRACE_MS) {
      return this.#response(kept.token, kept.expires);
    }
    const federated = await this.#federatedToken(request);
    const access = await this.#accessToken(federated);
    return this.#response(access.token, access.expires);
  }

  status(): readonly HeldToken[] {
    const held = (type: string, token: { issued: number; expires: number } | undefined) =>
      token === undefined ? [] : [{
        token_type: type,
        issue_time: new Date(token.issued).toISOString(),
        expire_time: new Date(token.expires).toISOString(),
      }];
    return [...held("federated token", this.#federated), ...held("access token", this.#access)];
  }

  #response(token: string, expires: number): StsTokenResponse {
    return {
      access_token: token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: Math.max(0, Math.floor((expires - this.#now()) / 1000)),
      scope: "",
      refresh_token: "",
    };
  }

  async #federatedToken(request: StsRequest): Promise<string> {
    const { trustDomain, clusterUrl } = this.#options;
    const namespace = singleAudience(request.subjectToken) ?? trustDomain;
    const body = {
      audience: `identitynamespace:${namespace}:${clusterUrl}`,
      grantType: request.grantType,
      requestedTokenType: ACCESS_TOKEN_TYPE,
      subjectTokenType: request.subjectTokenType,
      subjectToken: request.subjectToken,
      scope: request.scope || SCOPE,
    };
    const url = (this.#options.endpoints ?? CLOUD_ENDPOINTS).federatedToken;
    const answer = await this.#post("federated token", url, body, {}) as {
      access_token?: unknown;
      expires_in?: unknown;
    };
    if (typeof answer.access_token !== "string" || answer.access_token === "") {
      throw new Error("The federated token response has no access_token");
    }
    const issued = this.#now();
    this.#federated = {
      issued,
      expires: issued + (typeof answer.expires_in === "number" ? answer.expires_in * 1000 : 0),
    };
    return answer.access_token;
  }

  async #accessToken(federated: string): Promise<{ token: string; expires: number }> {
    const template = (this.#options.endpoints ?? CLOUD_ENDPOINTS).accessToken;
    const url = template.replace("%s", encodeURIComponent(this.#options.projectNumber));
    const body = { delegates: null, scope: [SCOPE], lifetime: { seconds: 3600 } };
    const answer = await this.#post("access token", url, body, { authorization: `Bearer ${federated}` }) as {
      accessToken?: unknown;
      expireTime?: unknown;
    };
    if (typeof answer.accessToken !== "string" || answer.accessToken === "") {
      throw new Error("The access token response has no accessToken");
    }
    const issued = this.#now();
    const parsed = typeof answer.expireTime === "string" ? Date.parse(answer.expireTime) : NaN;
    const access = {
      token: answer.accessToken,
      issued,
      expires: Number.isFinite(parsed) ? parsed : issued + DEFAULT_LIFE_MS,
    };
    this.#access = access;
    return access;
  }

  /**
   * POSTs `body` as JSON to `url`, tried up to {@link MAX_TRIES} times unless answered 4xx; resolves with the
   * answer's JSON.
   *
   * @throws {Error} naming `what`, the last status and an excerpt of the answer
   */
  async #post(what: string, url: string, body: unknown, headers: Record<string, string>): Promise<unknown> {
    const { metrics } = this.#options;
    let last = "";
    for (let attempt = 1; attempt <= MAX_TRIES; attempt++) {
      metrics?.counter("num_outgoing_requests").inc(TOKEN_EXCHANGE);
      if (attempt > 1) metrics?.counter("num_outgoing_retries").inc(TOKEN_EXCHANGE);
      const started = performance.now();
      let response: Response | undefined;
      let text = "";
      try {
        response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        text = await response.text();
      } catch (error) {
        last = (error as Error).message;
        response = undefined;
      } finally {
        metrics?.counter("outgoing_latency").inc(TOKEN_EXCHANGE, Math.round(performance.now() - started));
      }
      if (response?.status === 200) {
        try {
          return JSON.parse(text);
        } catch (cause) {
          throw new SyntaxError(`The ${what} response from ${url} is not JSON (${text.length} bytes)`, {
            cause,
          });
        }
      }
      metrics?.counter("num_failed_outgoing_requests").inc(TOKEN_EXCHANGE);
      if (response !== undefined) {
        last = `HTTP ${response.status}: ${JSON.stringify(text.slice(0, 200))}`;
        if (response.status >= 400 && response.status < 500) break;
      }
      if (attempt < MAX_TRIES) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    this.#options.log.warn(`cannot get the ${what}`, { url, error: last });
    throw new Error(`Cannot get the ${what} from ${url}: ${last}`);
  }
}

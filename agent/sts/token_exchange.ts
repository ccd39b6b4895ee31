/**
 * The token exchange contract between the agent's STS server and its `--tokenManagerPlugin`: the request
 * parameters of RFC 8693 as the server accepted them, the response a plugin issues, and what it shows of the
 * tokens it holds. A plugin never sees an invalid request; the server never sees a plugin's upstream.
 *
 * @module
 */

/** The token type of an OAuth access token, what the reference's plugin issues. */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/** An RFC 8693 token exchange request, its form fields as sent. */
export interface StsRequest {
  readonly grantType: string;
  readonly subjectToken: string;
  readonly subjectTokenType: string;
  readonly resource: string;
  readonly audience: string;
  readonly scope: string;
  readonly requestedTokenType: string;
  readonly actorToken: string;
  readonly actorTokenType: string;
}

/** A successful exchange, in the reference's field names (RFC 8693 section 2.2.1). */
export interface StsTokenResponse {
  readonly access_token: string;
  readonly issued_token_type: string;
  readonly token_type: string;
  /** Seconds the token stays valid. */
  readonly expires_in: number;
  readonly scope: string;
  readonly refresh_token: string;
}

/** One token a plugin holds, without the token itself. */
export interface HeldToken {
  readonly token_type: string;
  readonly issue_time: string;
  readonly expire_time: string;
}

/** Exchanges a workload's token for another; `--tokenManagerPlugin` names one. */
export interface TokenExchangePlugin {
  /**
   * Exchanges `request.subjectToken`.
   *
   * @throws {Error} saying why no token could be issued (the server answers `invalid_target`)
   */
  exchange(request: StsRequest): Promise<StsTokenResponse>;
  /** The tokens held, for `/stsStatus`. */
  status(): readonly HeldToken[];
}

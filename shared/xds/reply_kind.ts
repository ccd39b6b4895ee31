/**
 * What a state-of-the-world xDS request says about the latest response of its type, decided as the
 * reference's ADS and SDS servers decide it: a rejection is a NACK whatever nonce it carries (the proxy keeps
 * its last good config), a request without a nonce asks afresh (a new watch, or a reconnect), a nonce other
 * than the latest sent is stale (the proxy has not seen the newest response yet: it is ignored), and the
 * latest nonce without an error is an ACK. The discovery server's ADS and the agent's SDS server both decide
 * through it.
 *
 * @module
 */

/** The verdict on a request: `request` asks afresh, `ack`/`nack` answer the latest response, `stale` is ignored. */
export type ReplyKind = "request" | "ack" | "nack" | "stale";

/**
 * The kind of a request that carries `responseNonce` (empty when none) and an error detail when `rejected`,
 * when the latest response sent for its type had `latestNonce` (undefined when none was sent).
 */
export function replyKind(
  latestNonce: string | undefined,
  responseNonce: string,
  rejected: boolean,
): ReplyKind {
  if (rejected) return "nack";
  if (responseNonce === "") return "request";
  return responseNonce === latestNonce ? "ack" : "stale";
}

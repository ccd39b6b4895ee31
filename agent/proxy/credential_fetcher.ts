/**
 * `CREDENTIAL_FETCHER_TYPE`: where the token that authenticates the agent's CSR comes from. The reference's
 * default (and its later `JWT`) reads the orchestrator's token from the file `JWT_POLICY` names, as this agent
 * does; `GoogleComputeEngine` fetches the VM's identity token from the Compute Engine metadata server, which
 * exists only on that cloud, and is refused at startup rather than leaving the CA to refuse every CSR.
 *
 * @module
 */

/** Values that read the orchestrator token from its file. */
export const TOKEN_FILE_FETCHER_TYPES: readonly string[] = Object.freeze(["", "JWT"]);

/** Types of the reference that need something this agent does not reach, and what that is. */
const REFUSED: Readonly<Record<string, string>> = Object.freeze({
  GoogleComputeEngine:
    "fetches the VM identity token from Google Compute Engine's metadata server, which this " +
    "agent does not talk to",
  Mock: "is the reference's test double, not a credential source",
});

/**
 * Checks `CREDENTIAL_FETCHER_TYPE`.
 *
 * @throws {RangeError} naming the variable, its value and the accepted ones, for any other type
 */
export function checkCredentialFetcherType(type: string): void {
  if (TOKEN_FILE_FETCHER_TYPES.includes(type)) return;
  const accepted = `expected "" or "JWT" (the orchestrator token at the JWT_POLICY path)`;
  const why = REFUSED[type];
  throw new RangeError(
    why === undefined
      ? `CREDENTIAL_FETCHER_TYPE="${type.slice(0, 64)}" is not a credential fetcher type: ${accepted}`
      : `CREDENTIAL_FETCHER_TYPE="${type}" ${why}: ${accepted}`,
  );
}

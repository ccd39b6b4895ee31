import assert from "node:assert/strict";
import { checkCredentialFetcherType } from "./credential_fetcher.ts";

Deno.test("CREDENTIAL_FETCHER_TYPE unset or JWT reads the orchestrator token", () => {
  checkCredentialFetcherType("");
  checkCredentialFetcherType("JWT");
});

Deno.test("CREDENTIAL_FETCHER_TYPE=GoogleComputeEngine is refused, naming the variable and the metadata server", () => {
  assert.throws(
    () => checkCredentialFetcherType("GoogleComputeEngine"),
    (error: Error) =>
      error instanceof RangeError &&
      /^CREDENTIAL_FETCHER_TYPE="GoogleComputeEngine" fetches the VM identity token from Google Compute Engine's metadata server/
        .test(error.message) &&
      /expected "" or "JWT"/.test(error.message),
  );
});

Deno.test("an unknown CREDENTIAL_FETCHER_TYPE is refused", () => {
  assert.throws(
    () => checkCredentialFetcherType("Vault"),
    /CREDENTIAL_FETCHER_TYPE="Vault" is not a credential/,
  );
  assert.throws(() => checkCredentialFetcherType("Mock"), /test double/);
});

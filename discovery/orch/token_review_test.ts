import assert from "node:assert/strict";
import { OrchApiServer } from "../../shared/testing/orch_api_server.ts";
import { clientOf } from "./_test_writers.ts";
import { orchTokenReviewer } from "./token_review.ts";

Deno.test("orchTokenReviewer asks the orchestrator's TokenReview API for the audiences given", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_token_review_" });
  try {
    const review = orchTokenReviewer(await clientOf(api, dir));
    const projected = api.tokenReviews.issue("shop", "ratings", ["mesh-ca"]);
    const legacy = api.tokenReviews.issue("shop", "legacy");

    const passed = await review(projected, ["mesh-ca"]);
    assert.equal(passed.authenticated, true);
    assert.equal(passed.username, "system:serviceaccount:shop:ratings");
    assert.ok(passed.groups?.includes("system:serviceaccounts"));

    assert.equal((await review(projected, ["elsewhere"])).authenticated, false, "bound to another audience");
    assert.equal((await review(legacy, [])).authenticated, true, "a legacy token for the orchestrator's own");
    assert.equal((await review(legacy, ["mesh-ca"])).authenticated, false);

    api.tokenReviews.revoke(projected);
    const revoked = await review(projected, ["mesh-ca"]);
    assert.equal(revoked.authenticated, false);
    assert.equal(revoked.error, "invalid bearer token");
    assert.deepEqual(api.tokenReviews.reviews.map((r) => r.audiences), [
      ["mesh-ca"],
      ["elsewhere"],
      [],
      ["mesh-ca"],
      ["mesh-ca"],
    ]);
  } finally {
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

import assert from "node:assert/strict";
import { kubeconfigFor, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { clientOf } from "./_test_writers.ts";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { orchTokenReviewer, TokenReviewBusyError } from "./token_review.ts";

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

Deno.test("orchTokenReviewer refuses a review past its in-flight cap instead of queueing it", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let arrived = 0;
  // An orchestrator that holds every review until the test lets it answer.
  const slow = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    arrived++;
    await released;
    return Response.json({ kind: "TokenReview", apiVersion: "authentication.k8s.io/v1", status: {} }, {
      status: 201,
    });
  });
  const dir = await Deno.makeTempDir({ prefix: "mesh_token_review_" });
  try {
    await Deno.writeTextFile(`${dir}/kubeconfig`, kubeconfigFor(`http://127.0.0.1:${slow.addr.port}`));
    const review = orchTokenReviewer({
      kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
      limiter: new RateLimiter(1000, 100),
    }, 2);
    const held = [review("a", []), review("b", [])];
    await waitFor(() => arrived === 2, "two reviews at the orchestrator");
    await assert.rejects(() => review("c", []), TokenReviewBusyError);
    release();
    for (const verdict of await Promise.all(held)) assert.equal(verdict.authenticated, false);
    assert.equal((await review("d", [])).authenticated, false, "room again once they answered");
  } finally {
    release();
    await slow.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

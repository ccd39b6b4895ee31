import assert from "node:assert/strict";
import {
  clusterSpecifier,
  DEFAULT_RETRY_POLICY,
  fractionalPercent,
  retryPolicy,
  timeoutFields,
} from "./route_action.ts";

Deno.test("retryPolicy converts VirtualService retries as Istio does", async (t) => {
  await t.step("no retry setting gets the default policy; zero attempts none", () => {
    assert.deepEqual(retryPolicy(undefined), DEFAULT_RETRY_POLICY);
    assert.equal(retryPolicy({ attempts: 0 }), undefined);
    assert.equal(retryPolicy({}), undefined);
  });

  await t.step("attempts alone keep the default conditions", () => {
    assert.deepEqual(retryPolicy({ attempts: 5 }), { ...DEFAULT_RETRY_POLICY, num_retries: { value: 5 } });
  });

  await t.step("status codes move to retriable_status_codes, adding their condition once", () => {
    assert.deepEqual(retryPolicy({ attempts: 1, retryOn: "503, 502,unavailable" }), {
      ...DEFAULT_RETRY_POLICY,
      num_retries: { value: 1 },
      retry_on: "unavailable,retriable-status-codes",
      retriable_status_codes: [503, 502],
    });
    assert.equal(
      retryPolicy({ attempts: 1, retryOn: "retriable-status-codes,504" })?.retry_on,
      "retriable-status-codes",
    );
    assert.deepEqual(retryPolicy({ attempts: 1, retryOn: "cancelled" })?.retriable_status_codes, []);
  });
});

Deno.test("Route action helpers write what gRPC reads", async (t) => {
  await t.step("one destination is a cluster; several are weighted with their total", () => {
    assert.deepEqual(clusterSpecifier([{ name: "a", weight: 30 }]), { cluster: "a" });
    assert.deepEqual(clusterSpecifier([{ name: "a", weight: 30 }, { name: "b", weight: 70 }]), {
      weighted_clusters: {
        clusters: [{ name: "a", weight: { value: 30 } }, { name: "b", weight: { value: 70 } }],
        total_weight: { value: 100 },
      },
    });
  });

  await t.step("timeouts: none is a zero route timeout; a value also caps the stream duration", () => {
    assert.deepEqual(timeoutFields(undefined), { timeout: {} });
    assert.deepEqual(timeoutFields("0s"), { timeout: {} });
    assert.deepEqual(timeoutFields("250ms"), {
      timeout: { nanos: 250_000_000 },
      max_stream_duration: {
        max_stream_duration: { nanos: 250_000_000 },
        grpc_timeout_header_max: { nanos: 250_000_000 },
      },
    });
  });

  await t.step(
    "percentages are per million, deprecated integer percents per hundred, 100% by default",
    () => {
      assert.deepEqual(fractionalPercent({ value: 0.5 }), { numerator: 5000, denominator: "MILLION" });
      assert.deepEqual(fractionalPercent(undefined, 7), { numerator: 7, denominator: "HUNDRED" });
      assert.deepEqual(fractionalPercent(undefined), { numerator: 100, denominator: "HUNDRED" });
    },
  );
});

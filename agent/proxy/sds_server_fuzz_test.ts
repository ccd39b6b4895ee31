import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import fc from "fast-check";
import { encodeMessage } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { silentLogger } from "@mesh/shared/log/logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { DEFAULT_GRPC_LIMITS } from "@mesh/shared/grpc/grpc_channel_options";
import type { TlsCredential } from "@mesh/shared/credentials/tls_credential";
import { waitFor } from "@mesh/shared/testing/wait_for";
import {
  type CredentialSource,
  OTHER_RESOURCE_LABEL,
  SDS_SERVICE_DEFINITION,
  startSdsServer,
} from "./sds_server.ts";
import { FixedSecret } from "./_sds_test_support.ts";

/** Fuzz runs (one stream each) and seed; SDS_FUZZ_RUNS and SDS_FUZZ_SEED hunt with more. */
const RUNS = Number(Deno.env.get("SDS_FUZZ_RUNS") ?? 60);
const SEED = Number(Deno.env.get("SDS_FUZZ_SEED") ?? 42);

/** The names the server below serves; every other name is one it does not. */
const SERVED = ["default", "ROOTCA", "shop-cert", "shop-cert-cacert"];

class Credentials implements CredentialSource {
  readonly listeners = new Set<(name: string) => void>();
  get(name: string): TlsCredential | undefined {
    return name === "shop-cert" ? { certChainPem: "C", privateKeyPem: "K", caCertPem: "CA" } : undefined;
  }
  onChange(listener: (name: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

const schema = loadEnvoySchema();
const Response = schema.lookupType("envoy.service.discovery.v3.DiscoveryResponse");
const Secret = schema.lookupType("envoy.extensions.transport_sockets.tls.v3.Secret");

/** A name: mostly one served, else made up, empty, huge or with separators and control characters. */
const name = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SERVED) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom("", "default,ROOTCA", "-cacert", "a\nb", "\u0000") },
  { weight: 1, arbitrary: fc.nat(200_000).map((n) => "x".repeat(n)) },
);

/** What one message on the stream is; nonces are chosen when it is sent, from what came back so far. */
type Step =
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "request"; names: string[]; repeat: number; nonce: "none" | "latest" | "stale"; nack: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: "bytes", bytes }) as const),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("request" as const),
      names: fc.array(name, { maxLength: 8 }),
      repeat: fc.oneof(fc.constant(1), fc.nat(3_000)),
      nonce: fc.constantFrom("none" as const, "latest" as const, "stale" as const),
      nack: fc.boolean(),
    }),
  },
);

const request = (fields: Record<string, unknown>) =>
  Buffer.from(encodeMessage("type.googleapis.com/envoy.service.discovery.v3.DiscoveryRequest", fields));

Deno.test("any sequence of requests on an SDS stream gets served secrets once each, or INVALID_ARGUMENT, and leaves nothing behind", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sds_fuzz_" });
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const secrets = new FixedSecret();
  const credentials = new Credentials();
  const server = await startSdsServer({
    socket: `${dir}/SDS`,
    secrets,
    credentials,
    log: silentLogger,
    metrics,
  });
  const Client = grpc.makeClientConstructor(SDS_SERVICE_DEFINITION, "SDS");
  const client = new Client(`unix://${dir}/SDS`, grpc.credentials.createInsecure());
  // deno-lint-ignore no-explicit-any
  const open = (): grpc.ClientDuplexStream<Buffer, Buffer> => (client as any).StreamSecrets();
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
        const call = open();
        const names: string[][] = [];
        let latest = "";
        call.on("data", (bytes: Buffer) => {
          const response = Response.decode(bytes) as unknown as {
            nonce: string;
            resources?: { value: Uint8Array }[];
          };
          latest = response.nonce;
          names.push(
            (response.resources ?? []).map((any) =>
              (Secret.decode(any.value) as unknown as { name: string }).name
            ),
          );
        });
        const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
        call.on("error", () => {});
        const asked = new Set<string>();
        let garbled = false;
        let oversized = false;
        for (const s of steps) {
          if (s.kind === "bytes") {
            garbled = true;
            call.write(Buffer.from(s.bytes));
            continue;
          }
          // Repeated up to a little past the largest message taken, so some requests are refused for their size.
          const length = s.names.reduce((sum, n) => sum + n.length + 2, 0);
          const repeat = Math.min(s.repeat, Math.ceil(5_000_000 / length));
          const resourceNames = s.names.flatMap((n) => Array(repeat).fill(n));
          for (const n of s.names) asked.add(n);
          const nonce = s.nonce === "latest" ? latest : s.nonce === "stale" ? `${latest}-stale` : "";
          const bytes = request({
            type_url: TYPE_URL.secret,
            resource_names: resourceNames,
            ...(nonce !== "" ? { response_nonce: nonce } : {}),
            ...(s.nack ? { error_detail: { code: 3, message: "x".repeat(s.repeat) } } : {}),
          });
          oversized ||= bytes.length > DEFAULT_GRPC_LIMITS.maxReceiveMessageBytes;
          call.write(bytes);
        }
        call.end();
        const { code } = await status;
        assert.ok(
          code === grpc.status.OK || (garbled && code === grpc.status.INVALID_ARGUMENT) ||
            (oversized && code === grpc.status.RESOURCE_EXHAUSTED),
          `status ${code}`,
        );
        for (const sent of names) {
          assert.equal(new Set(sent).size, sent.length, `a secret sent twice: ${sent}`);
          for (const n of sent) {
            assert.ok(SERVED.includes(n) && asked.has(n), `sent ${n}, not asked or served`);
          }
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    for (const counter of ["total_secret_update_failures", "total_push_errors"]) {
      const { values } = await metrics.counter(counter).get();
      for (const { labels } of values) {
        assert.ok([...SERVED, OTHER_RESOURCE_LABEL].includes(labels.resource_name as string), counter);
      }
    }
    await waitFor(
      async () => (await metrics.gauge("total_active_connections").get()).values[0].value === 0,
      "every stream gone",
    );
    assert.equal(secrets.listeners.size, 1, "only the server's own version listener is left");
    assert.equal(credentials.listeners.size, 1, "only the server's own version listener is left");
  } finally {
    client.close();
    await server.close(10);
    await Deno.remove(dir, { recursive: true });
  }
});

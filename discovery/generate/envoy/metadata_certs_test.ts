import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { parseProxy } from "../../model/proxy.ts";
import { run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";

type Obj = Record<string, unknown>;
const API = "outbound|443||api.example.com";
const DB = "outbound|5432||db.example.com";

/** A sidecar whose pod mounts its own client certificate and key and names them in its metadata. */
const withCerts = parseProxy({
  id: "sidecar~10.9.9.8~app.example~example.svc.cluster.local",
  metadata: {
    NAMESPACE: "example",
    INSTANCE_IPS: "10.9.9.8",
    TLS_CLIENT_CERT_CHAIN: "/etc/certs/cert-chain.pem",
    TLS_CLIENT_KEY: "/etc/certs/key.pem",
  },
});

function tlsOf(allowMetadataCerts: boolean, proxy = withCerts): Map<string, Obj> {
  const cds = run(
    envoyCdsGenerator,
    proxy,
    new World().apply(...envoyResources()).push({ allowMetadataCerts }),
  );
  for (const [name, encoded] of cds.bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  return new Map(
    [API, DB].map((name) => [
      name,
      ((cds.byName.get(name)!.transport_socket as Obj).typed_config as Obj).common_tls_context as Obj,
    ]),
  );
}

const RULE_FILES = [{ certificate_chain: { filename: "/c.pem" }, private_key: { filename: "/k.pem" } }];

Deno.test("By default a MUTUAL DestinationRule's own certificate files are used whatever the proxy's metadata says", () => {
  assert.deepEqual(tlsOf(false).get(API)!.tls_certificates, RULE_FILES);
});

Deno.test("DISCOVERY_ALLOW_METADATA_CERTS_DR_MUTUAL_TLS: the metadata's files replace a MUTUAL rule's, file by file", () => {
  const tls = tlsOf(true);
  assert.deepEqual(tls.get(API)!.tls_certificates, [{
    certificate_chain: { filename: "/etc/certs/cert-chain.pem" },
    private_key: { filename: "/etc/certs/key.pem" },
  }]);
  assert.deepEqual((tls.get(API)!.validation_context as Obj).trusted_ca, { filename: "/ca.pem" });
  assert.equal(tls.get(DB)!.tls_certificates, undefined, "SIMPLE TLS presents no certificate");
  assert.deepEqual(
    tlsOf(true, envoySidecar()).get(API)!.tls_certificates,
    RULE_FILES,
    "no metadata, no change",
  );
});

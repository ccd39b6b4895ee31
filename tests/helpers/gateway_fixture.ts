/**
 * Test support for gateway end-to-end tests: a Gateway with a MUTUAL HTTPS server on 8443 naming the
 * credential `shop-cert` in namespace `edge`, and credential folders as an orchestrator mounts TLS Secrets.
 *
 * @module
 */
import type { PluggedInCa } from "../../shared/testing/plugged_in_ca.ts";

/** A Gateway in `edge` selecting `app: ingress`, serving shop.example.com on 8443 with `shop-cert` (MUTUAL). */
export const MUTUAL_GATEWAY_YAML = [
  "apiVersion: networking.mesh.io/v1beta1",
  "kind: Gateway",
  "metadata: { name: public, namespace: edge }",
  "spec:",
  "  selector: { app: ingress }",
  "  servers:",
  "  - port: { number: 8443, name: https, protocol: HTTPS }",
  "    hosts: [shop.example.com]",
  "    tls: { mode: MUTUAL, credentialName: shop-cert }",
  "",
].join("\n");

/** Writes `ca`'s intermediate certificate and key, and its root as the client CA, into `folder`. */
export async function writeCredentialFolder(folder: string, ca: PluggedInCa): Promise<void> {
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(`${folder}/tls.key`, ca.files["ca-key.pem"]);
  await Deno.writeTextFile(`${folder}/tls.crt`, ca.files["ca-cert.pem"]);
  await Deno.writeTextFile(`${folder}/ca.crt`, ca.files["root-cert.pem"]);
}

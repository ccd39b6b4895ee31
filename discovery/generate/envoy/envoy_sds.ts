/**
 * SDS over ADS for gateways: the secrets their TLS servers name (`credentialName`, and `<name>-cacert` for the
 * CA bundle of MUTUAL servers), from the snapshot's `SecretStore`, in the gateway's namespace. A name the store
 * does not hold is left out (the listener waits for it) and logged by the caller's metrics as a missing resource.
 *
 * Private keys go only to a gateway whose stream proved, on the secure port with `XDS_AUTH`, an identity in
 * the gateway's own namespace: a node id is a claim anyone can make, so a plaintext or unauthenticated stream
 * gets no secrets at all (as in Istio, whose `ISTIOD_ENABLE_SDS_SERVER` asks for the same).
 *
 * @module
 */
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { configKey } from "../../push/push_request.ts";
import { cacheKey, type GeneratedResource, type GenerateRequest, type XdsGenerator } from "../generator.ts";
import { digestOf } from "../fingerprint.ts";
import { parseSpiffeId } from "@mesh/shared/pki/spiffe_id";
import { credentialOfSdsName, envoyCredentialSecret } from "@mesh/shared/credentials/tls_credential";
import { sdsUnaffectedBy } from "./unaffected_kinds.ts";

/** Whether the proxy's caller proved an identity in the proxy's namespace, whose secrets it asks for. */
export function mayReadSecrets(proxy: Proxy): boolean {
  return (proxy.verifiedIdentities ?? []).some((id) => {
    try {
      return parseSpiffeId(id).namespace === proxy.namespace;
    } catch {
      return false;
    }
  });
}

/** Builds the secrets a gateway asks for. Reads the proxy's type and namespace and the named secrets. */
export const envoySdsGenerator: XdsGenerator<PushContext> = {
  typeUrl: TYPE_URL.secret,
  unaffectedBy: sdsUnaffectedBy,
  generate(proxy: Proxy, push: PushContext, request: GenerateRequest): GeneratedResource[] {
    if (proxy.type !== "router" || push.secrets === undefined || !mayReadSecrets(proxy)) return [];
    const out: GeneratedResource[] = [];
    for (const name of new Set(request.names)) {
      const { credential: base, caOnly } = credentialOfSdsName(name);
      const secret = push.secrets.get(proxy.namespace, base);
      if (secret === undefined) continue;
      const resource = envoyCredentialSecret(name, secret, caOnly);
      if (resource === undefined) continue;
      out.push({
        name,
        key: cacheKey(TYPE_URL.secret, [name, proxy.namespace, digestOf(resource)], [
          configKey("Secret", proxy.namespace, base),
        ]),
        build: () => resource,
      });
    }
    return out;
  },
};

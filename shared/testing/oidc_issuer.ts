/**
 * Test support: a local OIDC issuer (discovery document and JWKS over HTTP) that signs tokens for service
 * accounts, as an orchestrator's token issuer would. Only tests import this file.
 *
 * @module
 */
import * as jose from "jose";

/** A running issuer. */
export interface OidcIssuer {
  /** The issuer URL (`TOKEN_ISSUER`). */
  readonly url: string;
  /** A token with `claims`, signed by this issuer (or claiming to be `issuer`). */
  sign(claims: jose.JWTPayload, issuer?: string): Promise<string>;
  /** A token for a service account, for audience `aud`. */
  serviceAccountToken(namespace: string, name: string, aud?: string): Promise<string>;
  close(): Promise<void>;
}

/** Starts an issuer on a free loopback port. */
export async function startOidcIssuer(): Promise<OidcIssuer> {
  const { publicKey, privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "RS256" };
  let url = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req): Response => {
    const path = new URL(req.url).pathname;
    if (path === "/.well-known/openid-configuration") {
      return Response.json({ issuer: url, jwks_uri: `${url}/keys` });
    }
    return path === "/keys" ? Response.json({ keys: [jwk] }) : new Response("not found", { status: 404 });
  });
  url = `http://127.0.0.1:${server.addr.port}`;
  const sign = (claims: jose.JWTPayload, issuer = url) =>
    new jose.SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" }).setIssuer(issuer).setIssuedAt()
      .setExpirationTime("1h").sign(privateKey);
  return {
    url,
    sign,
    serviceAccountToken: (namespace, name, aud = "mesh-ca") =>
      sign({ sub: `system:serviceaccount:${namespace}:${name}`, aud }),
    close: () => server.shutdown(),
  };
}

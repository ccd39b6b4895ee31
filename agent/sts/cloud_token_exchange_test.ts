import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { silentLogger } from "@mesh/shared/log/logger";
import { CloudTokenExchange } from "./cloud_token_exchange.ts";
import { JWT_TOKEN_TYPE, startStsServer, TOKEN_EXCHANGE_GRANT_TYPE } from "./sts_server.ts";

/** A JWT whose payload names `aud`; the plugin reads it unverified, as the reference does. */
function jwt(aud: unknown): string {
  const part = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, "");
  return `${part({ alg: "RS256" })}.${part({ aud, sub: "system:serviceaccount:shop:cart" })}.c2ln`;
}

/** The cloud's two token endpoints, played on loopback; `fail` answers the next federated calls with it. */
function playedCloud() {
  const calls: { path: string; authorization: string | null; body: Record<string, unknown> }[] = [];
  const fail: number[] = [];
  let expireTime = new Date(Date.now() + 3_600_000).toISOString();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    calls.push({ path, authorization: request.headers.get("authorization"), body: await request.json() });
    if (path === "/v1/identitybindingtoken") {
      const status = fail.shift();
      if (status !== undefined) return new Response("unavailable", { status });
      return Response.json({
        access_token: "federated-1",
        issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
        token_type: "Bearer",
        expires_in: 3600,
      });
    }
    return Response.json({ accessToken: `access-${calls.length}`, expireTime });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  return {
    calls,
    fail,
    setExpiry: (iso: string) => expireTime = iso,
    endpoints: {
      federatedToken: `${base}/v1/identitybindingtoken`,
      accessToken: `${base}/v1/projects/-/serviceAccounts/service-%s@x:generateAccessToken`,
    },
    close: () => server.shutdown(),
  };
}

function exchangeForm(subjectToken: string): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
      subject_token: subjectToken,
      subject_token_type: JWT_TOKEN_TYPE,
    }).toString(),
  };
}

async function counted(metrics: Metrics, name: string): Promise<number> {
  const { values } = await metrics.counter(name).get();
  return values.filter((v) => v.labels.request_type === "token_exchange").reduce(
    (sum, v) => sum + v.value,
    0,
  );
}

Deno.test("STS on --stsPort exchanges a token through CloudTokenExchange at the endpoints it plays", async () => {
  const cloud = playedCloud();
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  let now = Date.now();
  const plugin = new CloudTokenExchange({
    trustDomain: "cluster.local",
    projectNumber: "1234",
    clusterUrl: "https://container.example/clusters/c1",
    endpoints: cloud.endpoints,
    metrics,
    log: silentLogger,
    now: () => now,
  });
  const sts = await startStsServer("127.0.0.1", 0, plugin, silentLogger);
  try {
    const response = await fetch(`${sts.url}/token`, exchangeForm(jwt(["mesh.example"])));
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.deepEqual(Object.keys(body).sort(), [
      "access_token",
      "expires_in",
      "issued_token_type",
      "refresh_token",
      "scope",
      "token_type",
    ]);
    assert.equal(body.access_token, "access-2");
    assert.equal(body.issued_token_type, "urn:ietf:params:oauth:token-type:access_token");
    assert.equal(body.token_type, "Bearer");
    assert.ok(body.expires_in > 3500 && body.expires_in <= 3600, String(body.expires_in));

    const [federated, access] = cloud.calls;
    assert.equal(
      federated.body.audience,
      "identitynamespace:mesh.example:https://container.example/clusters/c1",
    );
    assert.equal(federated.body.subjectTokenType, JWT_TOKEN_TYPE);
    assert.equal(federated.body.grantType, TOKEN_EXCHANGE_GRANT_TYPE);
    assert.equal(access.path, "/v1/projects/-/serviceAccounts/service-1234@x:generateAccessToken");
    assert.equal(
      access.authorization,
      "Bearer federated-1",
      "the federated token authorizes the second step",
    );
    assert.equal(await counted(metrics, "num_outgoing_requests"), 2);

    // Kept until five minutes before it expires: the next exchange calls nobody.
    const again = await (await fetch(`${sts.url}/token`, exchangeForm(jwt(["mesh.example"])))).json();
    assert.equal(again.access_token, "access-2");
    assert.equal(cloud.calls.length, 2);
    now += 3_600_000 - 299_000;
    const renewed = await (await fetch(`${sts.url}/token`, exchangeForm(jwt(["mesh.example"])))).json();
    assert.equal(renewed.access_token, "access-4", "inside the grace period the token is fetched again");

    const status = await (await fetch(`${sts.url}/stsStatus`)).json();
    assert.deepEqual(status.tokens.map((t: { token_type: string }) => t.token_type), [
      "federated token",
      "access token",
    ]);
    assert.doesNotMatch(JSON.stringify(status), /access-4|federated-1/, "no token is shown");
  } finally {
    await sts.shutdown();
    await cloud.close();
  }
});

Deno.test("CloudTokenExchange falls back to TRUST_DOMAIN, retries a 5xx and gives up on a 4xx", async () => {
  const cloud = playedCloud();
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const plugin = new CloudTokenExchange({
    trustDomain: "example.org",
    projectNumber: "1234",
    clusterUrl: "https://c",
    endpoints: cloud.endpoints,
    metrics,
    log: silentLogger,
  });
  const sts = await startStsServer("127.0.0.1", 0, plugin, silentLogger);
  try {
    cloud.fail.push(503);
    const ok = await fetch(`${sts.url}/token`, exchangeForm(jwt(["a", "b"])));
    assert.equal(ok.status, 200, await ok.clone().text());
    await ok.body?.cancel();
    assert.equal(cloud.calls[1].body.audience, "identitynamespace:example.org:https://c", "two audiences");
    assert.equal(await counted(metrics, "num_outgoing_retries"), 1);

    const refusing = new CloudTokenExchange({
      trustDomain: "example.org",
      projectNumber: "1234",
      clusterUrl: "https://c",
      endpoints: cloud.endpoints,
      log: silentLogger,
    });
    cloud.fail.push(403, 403);
    const before = cloud.calls.length;
    await assert.rejects(
      () => refusing.exchange({ ...emptyRequest(), subjectToken: jwt("x") }),
      /Cannot get the federated token from .*: HTTP 403/,
    );
    assert.equal(cloud.calls.length, before + 1, "a 4xx is not retried");
  } finally {
    await sts.shutdown();
    await cloud.close();
  }
});

function emptyRequest() {
  return {
    grantType: TOKEN_EXCHANGE_GRANT_TYPE,
    subjectToken: "",
    subjectTokenType: JWT_TOKEN_TYPE,
    resource: "",
    audience: "",
    scope: "",
    requestedTokenType: "",
    actorToken: "",
    actorTokenType: "",
  };
}

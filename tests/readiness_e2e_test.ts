/**
 * Readiness end to end: an orchestrator sends traffic, webhook calls included, the moment `/ready` says 200,
 * so every listener must answer by then.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import https from "node:https";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";
import { waitFor } from "../shared/testing/wait_for.ts";

/** Resolves with the status of a GET over TLS; the certificate is the mesh CA's, not what is checked here. */
function httpsStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.get(url, { rejectUnauthorized: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", reject);
  });
}

/** Resolves once an HTTP/2 server at `authority` has answered the connection preface with its SETTINGS. */
function http2Answers(authority: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(authority, { rejectUnauthorized: false });
    session.once("remoteSettings", () => {
      session.close();
      resolve();
    });
    session.once("error", (error) => {
      session.destroy();
      reject(error);
    });
  });
}

async function httpStatus(url: string): Promise<number> {
  const response = await fetch(url);
  await response.body?.cancel();
  return response.status;
}

Deno.test("The moment /ready says 200, every listener of mesh-discovery answers", async () => {
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", "examples/config"]),
  );
  let exited = false;
  server.child.status.then(() => exited = true);
  try {
    // Polled as fast as a kubelet probe could be configured to; no waiting between 200 and the calls.
    await waitFor(
      async () => {
        if (exited) throw new Error(`mesh-discovery exited before it was ready:\n${server.stderr}`);
        return await httpStatus(`http://${addresses.httpAddr}/ready`).catch(() => 0) === 200;
      },
      "/ready to say 200",
      30_000,
      20,
    );
    const [webhook, metrics, ctrlz] = await Promise.all([
      httpsStatus(`https://${addresses.httpsAddr}/httpsReady`),
      httpStatus(`http://${addresses.monitoringAddr}/metrics`),
      httpStatus(`http://127.0.0.1:${addresses.ctrlzPort}/`),
      http2Answers(`http://${addresses.grpcAddr}`),
      http2Answers(`https://${addresses.secureGRPCAddr}`),
    ]);
    assert.deepEqual({ webhook, metrics, ctrlz }, { webhook: 200, metrics: 200, ctrlz: 200 });
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});

import assert from "node:assert/strict";
import { kubeconfigFor } from "@mesh/shared/testing/orch_api_server";
import { MAX_KUBECONFIG_BYTES, parseRemoteKubeconfig } from "./remote_kubeconfig.ts";

const GOOD = kubeconfigFor("http://127.0.0.1:6443");

/** The error `text` is refused with; fails when it is taken. */
function refusal(text: string): string {
  const parsed = parseRemoteKubeconfig(text);
  assert.notEqual(parsed.error, undefined, `refused: ${text.slice(0, 80)}`);
  return parsed.error!;
}

Deno.test("A kubeconfig whose current context names a cluster with a server is read with its token", () => {
  const parsed = parseRemoteKubeconfig(GOOD);
  assert.equal(parsed.error, undefined);
  assert.equal(parsed.error === undefined && parsed.server, "http://127.0.0.1:6443");
  assert.equal(parsed.error === undefined && parsed.kubeConfig.getCurrentUser()?.token, "test-token");
  assert.equal(parsed.error === undefined && parsed.kubeConfig.getCurrentCluster()?.skipTLSVerify, true);
});

Deno.test("Kubeconfigs of the wrong shape are refused with where and what was expected, never thrown", () => {
  // The client's own loader threw TypeErrors on these ("Cannot read properties of null", "replace is not a
  // function"), or took a current context that is a map as no context.
  assert.match(refusal(""), /expected a YAML mapping/);
  assert.match(refusal("5"), /expected a YAML mapping/);
  assert.match(refusal("clusters: [ {"), /^it is not YAML/);
  assert.match(
    refusal(GOOD.replace("current-context: test", "current-context: {a: 1}")),
    /current-context: expected a string/,
  );
  assert.match(refusal(GOOD.replace("current-context: test", "")), /expected a "current-context"/);
  assert.match(
    refusal(GOOD.replace("- name: test\n  cluster:", "- null\n- name: test\n  cluster:")),
    /clusters\[0\]: expected an object, got null/,
  );
  assert.match(
    refusal(GOOD.replace("server: http://127.0.0.1:6443", "server: 6443")),
    /cluster\.server: expected a string/,
  );
  assert.match(
    refusal(GOOD.replace("server: http://127.0.0.1:6443", "server: 'file:///etc'")),
    /to be an http\(s\) URL/,
  );
  assert.match(
    refusal(GOOD.replace("token: test-token", "token: [a]")),
    /users\[0\]\.user\.token: expected a string, got a list/,
  );
  assert.match(
    refusal(GOOD.replace("insecure-skip-tls-verify: true", "insecure-skip-tls-verify: 'no'")),
    /expected true or false/,
  );
});

Deno.test("A kubeconfig that would read files or run commands on the control plane's host is refused", () => {
  // The client read `token-file` from this host's disk and sent it as a bearer token to the named server.
  for (
    const [field, value] of [
      ["token-file", "/var/run/secrets/kubernetes.io/serviceaccount/token"],
      ["client-key", "/etc/mesh/key.pem"],
      ["exec", "{command: sh, apiVersion: client.authentication.k8s.io/v1}"],
      ["auth-provider", "{name: gcp, config: {cmd-path: sh}}"],
    ]
  ) {
    assert.match(
      refusal(GOOD.replace("token: test-token", `${field}: ${value}`)),
      new RegExp(`users\\[0\\]\\.user\\.${field}: expected inline data only`),
    );
  }
  assert.match(
    refusal(GOOD.replace("insecure-skip-tls-verify: true", "certificate-authority: /etc/ssl/ca.pem")),
    /clusters\[0\]\.cluster\.certificate-authority: expected inline data only/,
  );
});

Deno.test("Huge, deeply nested and alias-bomb kubeconfigs are refused at once", () => {
  assert.match(refusal(GOOD + `# ${"x".repeat(MAX_KUBECONFIG_BYTES)}\n`), /expected at most 1048576/);
  assert.match(
    refusal(`a: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`),
    /^it is not YAML: nesting exceeded/,
  );
  // Each level names the one before ten times: 10^30 entries when expanded, a few hundred bytes as written.
  const levels = Array.from(
    { length: 30 },
    (_, i) => `l${i + 1}: &l${i + 1} [${Array(10).fill(`*l${i}`).join(",")}]`,
  );
  const bomb = `l0: &l0 [x]\n${levels.join("\n")}\n`;
  assert.match(
    refusal(bomb + GOOD.replace("server: http://127.0.0.1:6443", "server: *l30").replace(/^/gm, "")),
    /to be an http\(s\) URL/,
  );
  assert.match(
    refusal(bomb + GOOD.replace("token: test-token", "token: *l30")),
    /user\.token: expected a string, got a list/,
  );
});

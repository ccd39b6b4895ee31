import assert from "node:assert/strict";
import { discoveryAddresses, discoveryArgs, runProgram, startProgram } from "./helpers/programs.ts";

const BASE = ["--registries", "Mock", "--configDir", "examples/config"];

Deno.test("Out-of-range settings stop mesh-discovery before any port opens", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "DISCOVERY_XDS_CACHE_SIZE",
      "-5",
      /DISCOVERY_XDS_CACHE_SIZE="-5" is out of range: expected a value from 0/,
    ],
    ["DISCOVERY_DEBOUNCE_MAX", "-10s", /DISCOVERY_DEBOUNCE_MAX="-10s" is out of range/],
    [
      "DISCOVERY_TRACE_SAMPLING",
      "NaN",
      /DISCOVERY_TRACE_SAMPLING="NaN" is out of range: expected a finite number/,
    ],
    ["MESH_GPRC_MAXSTREAMS", "0", /MESH_GPRC_MAXSTREAMS="0" is out of range: expected a value from 1/],
    ["MESH_GPRC_MAXRECVMSGSIZE", "-1", /MESH_GPRC_MAXRECVMSGSIZE="-1" is out of range/],
    [
      "SPIFFE_BUNDLE_ENDPOINTS",
      "partner|http://x/b",
      /Invalid SPIFFE_BUNDLE_ENDPOINTS URL "http:\/\/x\/b" for partner: a bundle endpoint must be https/,
    ],
  ]; // deno-fmt-ignore
  for (const [name, value, message] of cases) {
    await t.step(`${name}=${value}`, async () => {
      const result = await runProgram("mesh-discovery", discoveryArgs(discoveryAddresses(), BASE), {
        [name]: value,
      });
      assert.equal(result.code, 1);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stdout + result.stderr, /listening/);
    });
  }
});

Deno.test("Each bad flag or variable stops mesh-discovery naming it, the value and what is expected, before any port opens", async (t) => {
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    ["an empty --domain", ["--domain", ""], {}, /Invalid --domain "": expected a DNS domain suffix/],
    [
      "an unknown networking plugin",
      ["--plugins", "authn,mixer"],
      {},
      /Invalid --plugins "authn,mixer": unknown plugin "mixer"; expected some of authn, authz, ext_authz, health/,
    ],
    [
      "a --trust-domain with a slash",
      ["--trust-domain", "a/b"],
      {},
      /Invalid --trust-domain "a\/b": expected DNS labels/,
    ],
    [
      "a namespace that is no DNS label",
      ["--namespace", "Mesh_System"],
      {},
      /Invalid --namespace \(or POD_NAMESPACE\) "Mesh_System": expected a namespace name/,
    ],
    [
      "a --clusterRegistriesNamespace that is no namespace name",
      ["--clusterRegistriesNamespace", "Mesh/System"],
      {},
      /Invalid --clusterRegistriesNamespace "Mesh\/System": expected a namespace name/,
    ],
    [
      "a custom host that is no DNS name",
      [],
      { MESHD_CUSTOM_HOST: "meshd.example.com,bad host" },
      /Invalid MESHD_CUSTOM_HOST host "bad host": expected DNS names/,
    ],
    [
      "a zero workload certificate TTL",
      [],
      { DEFAULT_WORKLOAD_CERT_TTL: "0s" },
      /DEFAULT_WORKLOAD_CERT_TTL=0s: expected more than 0/,
    ],
    [
      "a debounce of years",
      [],
      { DISCOVERY_DEBOUNCE_AFTER: "100000h" },
      /DISCOVERY_DEBOUNCE_AFTER="100000h" is out of range: expected a duration from 0s to 1m0s/,
    ],
    [
      "a token issuer that is not a URL",
      [],
      { TOKEN_ISSUER: "notaurl" },
      /TOKEN_ISSUER="notaurl" is not an issuer URL: expected an http\(s\) URL/,
    ],
    [
      "a ROOT_CA_DIR that does not exist",
      [],
      { ROOT_CA_DIR: "/nonexistent" },
      /ROOT_CA_DIR="\/nonexistent" is not a directory/,
    ],
  ]; // deno-fmt-ignore
  for (const [what, args, env, message] of cases) {
    await t.step(what, async () => {
      const server = startProgram("mesh-discovery", discoveryArgs(discoveryAddresses(), [...BASE, ...args]), env);
      // Either the program exits, or a listener opens first: the second is the failure this test is about.
      const opened = await Promise.race([
        server.child.status.then(() => false),
        server.waitFor(/listening/).then(() => true, () => false),
      ]);
      const status = await server.stop();
      assert.equal(opened, false, `a listener opened before the check:\n${server.stderr}`);
      assert.equal(status.code, 1, server.stderr);
      assert.match(server.stderr, message);
      assert.doesNotMatch(server.stdout + server.stderr, /listening/, "nothing opened before the check");
    });
  }
});

Deno.test("A --caCertFile that is missing or holds no certificate stops startup, naming the flag", async () => {
  const dir = await Deno.makeTempDir({ prefix: "settings_e2e_" });
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, "not a certificate\n");
    for (
      const [file, message] of [[`${dir}/none.pem`, /Cannot read --caCertFile/], [
        `${dir}/ca.pem`,
        /Invalid --caCertFile/,
      ]]
    ) {
      const result = await runProgram(
        "mesh-discovery",
        discoveryArgs(discoveryAddresses(), [...BASE, "--caCertFile", file as string]),
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, message as RegExp);
      assert.doesNotMatch(result.stdout + result.stderr, /listening/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("A port in use stops mesh-discovery naming the flag and the address, with nothing opened", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const busy = `127.0.0.1:${(taken.addr as Deno.NetAddr).port}`;
  try {
    const result = await runProgram(
      "mesh-discovery",
      discoveryArgs(discoveryAddresses({ httpAddr: busy }), BASE),
    );
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(`Cannot listen on ${busy} \\(--httpAddr\\): the address is already in use`),
    );
    assert.doesNotMatch(result.stdout + result.stderr, /listening/, "nothing opened before the check");
  } finally {
    taken.close();
  }
});

Deno.test("An invalid --meshConfig file stops startup; a missing one means the defaults", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "settings_e2e_" });
  try {
    await t.step("invalid: exit 1 naming the file", async () => {
      await Deno.writeTextFile(`${dir}/mesh.yaml`, "connectTimeout: soon\nnoSuchField: 1\n");
      const result = await runProgram(
        "mesh-discovery",
        discoveryArgs(discoveryAddresses(), [...BASE, "--meshConfig", `${dir}/mesh.yaml`]),
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, /Invalid mesh config file --meshConfig ".*mesh\.yaml": .*connectTimeout/);
      assert.doesNotMatch(result.stdout + result.stderr, /listening|keeping|default mesh config/);
    });
    await t.step("missing: the server starts on the defaults", async () => {
      const server = startProgram(
        "mesh-discovery",
        discoveryArgs(discoveryAddresses(), [...BASE, "--meshConfig", `${dir}/absent.yaml`, "--log_as_json"]),
      );
      try {
        await server.waitFor(/"msg":"discovery server started"/);
      } finally {
        assert.equal((await server.stop()).code, 0);
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGHUP during startup and after ready is ignored with a log line; SIGTERM still stops the server", async () => {
  const addresses = discoveryAddresses();
  const server = startProgram("mesh-discovery", discoveryArgs(addresses, [...BASE, "--log_as_json"]));
  try {
    // The config directory is read before any port opens: the process is still starting.
    await server.waitFor(/loaded \d+ resources/);
    server.child.kill("SIGHUP");
    await server.waitFor(/SIGHUP received and ignored/);
    await server.waitFor(/"msg":"discovery server started"/);
    const ready = await fetch(`http://${addresses.httpAddr}/ready`);
    await ready.body?.cancel();
    assert.equal(ready.status, 200);
    server.child.kill("SIGHUP");
    await server.waitFor(/SIGHUP received and ignored[^]*SIGHUP received and ignored/);
    const still = await fetch(`http://${addresses.httpAddr}/ready`);
    await still.body?.cancel();
    assert.equal(still.status, 200);
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});

Deno.test("SIGTERM during startup still ends mesh-discovery at once", async () => {
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(discoveryAddresses(), [...BASE, "--log_as_json"]),
  );
  await server.waitFor(/loaded \d+ resources/);
  // The signal ends the process whenever it lands: at once during startup, gracefully (exit 0) after it.
  const status = await server.stop("SIGTERM");
  const started = /discovery server started/.test(server.stdout + server.stderr);
  assert.equal(status.success, started, server.stderr);
});

Deno.test("A missing TLS file stops mesh-discovery before any port opens", async () => {
  const result = await runProgram(
    "mesh-discovery",
    discoveryArgs(discoveryAddresses(), [
      ...BASE,
      "--tlsCertFile",
      "/tmp/settings_e2e_missing_cert.pem",
      "--tlsKeyFile",
      "/tmp/settings_e2e_missing_key.pem",
    ]),
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /settings_e2e_missing_cert\.pem/);
  assert.doesNotMatch(result.stdout + result.stderr, /listening/);
});

Deno.test("An out-of-range flag stops mesh-discovery naming the flag, value and range", async () => {
  const result = await runProgram(
    "mesh-discovery",
    discoveryArgs(discoveryAddresses(), [...BASE, "--keepaliveTimeout", "-5s"]),
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Invalid --keepaliveTimeout "-5s": expected a value greater than 0s/);
  assert.doesNotMatch(result.stdout + result.stderr, /listening/);
});

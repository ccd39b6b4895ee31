import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateGateway } from "./gateway.ts";

const gw = (spec: unknown, name = "public") => check(validateGateway, spec, { name });
const http = { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*/bookinfo.example.com"] };

Deno.test("Gateway accepts valid servers", async (t) => {
  await t.step("TCP server with a bare host (old style)", () => {
    const r = gw({
      selector: { istio: "ingressgateway" },
      servers: [{
        port: { number: 31400, protocol: "TCP", name: "tcp" },
        hosts: ["a.istio-system.svc.cluster.local"],
      }],
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("HTTP with HTTPS redirect, HTTPS with a credential, TLS passthrough, ISTIO_MUTUAL", () => {
    const r = gw({
      servers: [
        { ...http, tls: { httpsRedirect: true } },
        {
          port: { number: 443, name: "https", protocol: "HTTPS" },
          hosts: ["bookinfo/*.example.com", "10.0.0.1"],
          tls: { mode: "SIMPLE", credentialName: "bookinfo-cert", minProtocolVersion: "TLSV1_2" },
        },
        {
          port: { number: 8443, name: "tls", protocol: "TLS" },
          hosts: ["./*"],
          tls: { mode: "PASSTHROUGH" },
        },
        {
          port: { number: 15443, name: "mtls", protocol: "TLS" },
          hosts: ["*"],
          tls: { mode: "ISTIO_MUTUAL" },
        },
        {
          port: { number: 9443, name: "mutual", protocol: "HTTPS" },
          hosts: ["*"],
          tls: {
            mode: "MUTUAL",
            serverCertificate: "/c.pem",
            privateKey: "/k.pem",
            caCertificates: "/ca.pem",
          },
        },
      ],
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("a server bound to a unix socket with port 0", () => {
    const r = gw({
      servers: [{
        port: { number: 0, name: "uds", protocol: "HTTP" },
        bind: "unix:///var/run/gw.sock",
        hosts: ["*"],
      }],
    });
    assert.deepEqual(r.messages, []);
  });
});

Deno.test("Gateway rejects invalid gateways with the field path", async (t) => {
  await t.step("no servers; a name with dots", () => {
    assert.deepEqual(gw({ selector: { istio: "ingressgateway" } }).errors, ["spec.servers"]);
    assert.deepEqual(gw({ servers: [http] }, "public.gw").errors, ["metadata.name"]);
  });

  await t.step("server without hosts or port, invalid hosts", () => {
    const r = gw({
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" } }, { hosts: ["bad/host", "short"] }],
    });
    assert.deepEqual(r.errors, [
      "spec.servers[0].hosts",
      "spec.servers[1].hosts[0]",
      "spec.servers[1].hosts[1]",
      "spec.servers[1].port",
    ]);
  });

  await t.step("port without name or protocol, out of range, duplicate names", () => {
    const r = gw({
      servers: [
        { port: { number: 70000 }, hosts: ["*"] },
        http,
        { ...http, port: { number: 81, name: "http", protocol: "HTTP" } },
      ],
    });
    assert.deepEqual(r.errors, [
      "spec.servers[0].port.number",
      "spec.servers[0].port.protocol",
      "spec.servers[0].port.name",
      "spec.servers[2].port.name",
    ]);
  });

  await t.step("TLS settings: missing for HTTPS, present on TCP or with certificates on HTTP", () => {
    const https = { port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["*"] };
    assert.deepEqual(gw({ servers: [https] }).errors, ["spec.servers[0].tls"]);
    const tcp = {
      port: { number: 9000, name: "tcp", protocol: "TCP" },
      hosts: ["*"],
      tls: { mode: "SIMPLE", credentialName: "c" },
    };
    assert.deepEqual(gw({ servers: [tcp] }).errors, ["spec.servers[0].tls"]);
    assert.deepEqual(gw({ servers: [{ ...http, tls: { mode: "SIMPLE", credentialName: "c" } }] }).errors, [
      "spec.servers[0].tls",
    ]);
  });

  await t.step("server TLS modes and their required fields", () => {
    const tls = (settings: unknown) =>
      gw({
        servers: [{ port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["*"], tls: settings }],
      });
    assert.deepEqual(tls({ mode: "SIMPLE" }).errors, [
      "spec.servers[0].tls.serverCertificate",
      "spec.servers[0].tls.privateKey",
    ]);
    assert.deepEqual(tls({ mode: "MUTUAL", serverCertificate: "/c", privateKey: "/k" }).errors, [
      "spec.servers[0].tls.caCertificates",
    ]);
    assert.deepEqual(tls({ mode: "ISTIO_MUTUAL", privateKey: "/k" }).errors, [
      "spec.servers[0].tls.privateKey",
    ]);
    // MESH_MUTUAL is our name for ISTIO_MUTUAL: accepted, and held to the same rules.
    assert.deepEqual(tls({ mode: "MESH_MUTUAL" }).errors, []);
    assert.deepEqual(tls({ mode: "MESH_MUTUAL", privateKey: "/k" }).errors, [
      "spec.servers[0].tls.privateKey",
    ]);
    assert.deepEqual(
      tls({
        mode: "SIMPLE",
        credentialName: "c",
        minProtocolVersion: "TLSV1_3",
        maxProtocolVersion: "TLSV1_2",
      }).errors,
      [
        "spec.servers[0].tls.minProtocolVersion",
      ],
    );
  });

  await t.step("bind addresses and unix sockets", () => {
    assert.deepEqual(gw({ servers: [{ ...http, bind: "localhost" }] }).errors, ["spec.servers[0].bind"]);
    assert.deepEqual(gw({ servers: [{ ...http, bind: "unix:///gw.sock" }] }).errors, [
      "spec.servers[0].port.number",
    ]);
  });

  await t.step("selectors with wildcards", () => {
    assert.deepEqual(gw({ selector: { app: "*" }, servers: [http] }).errors, ["spec.selector.app"]);
  });
});

Deno.test("Gateway warns about httpsRedirect on a non-HTTP server", () => {
  const r = gw({
    servers: [{
      port: { number: 443, name: "https", protocol: "HTTPS" },
      hosts: ["*"],
      tls: { mode: "SIMPLE", credentialName: "c", httpsRedirect: true },
    }],
  });
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, ["spec.servers[0].tls.httpsRedirect"]);
});

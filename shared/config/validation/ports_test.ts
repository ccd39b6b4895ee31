import assert from "node:assert/strict";
import {
  checkPort,
  checkPortName,
  checkProtocol,
  isHttpProtocol,
  isTlsProtocol,
  parseProtocol,
} from "./ports.ts";

Deno.test("protocols parse case-insensitively and classify", () => {
  assert.equal(parseProtocol("grpc-web"), "GRPC-Web");
  assert.equal(parseProtocol("MONGO"), "Mongo");
  assert.equal(parseProtocol("smtp"), undefined);
  assert.ok(isHttpProtocol(parseProtocol("http2")) && isHttpProtocol("GRPC") && !isHttpProtocol("HTTPS"));
  assert.ok(isTlsProtocol("HTTPS") && isTlsProtocol("TLS") && !isTlsProtocol("TCP"));
  assert.equal(checkProtocol(""), undefined);
  assert.equal(checkProtocol("udp"), undefined);
  assert.match(checkProtocol("SMTP") ?? "", /unsupported protocol "SMTP"/);
});

Deno.test("ports and port names", () => {
  assert.equal(checkPort(1), undefined);
  assert.equal(checkPort(65535), undefined);
  for (const bad of [0, 65536, -1, 1.5]) assert.ok(checkPort(bad), String(bad));
  assert.equal(checkPortName("http-web"), undefined);
  assert.ok(checkPortName("http_web"));
  assert.ok(checkPortName(""));
});

import assert from "node:assert/strict";
import { decodePem, decodePemOf, encodePem } from "./pem.ts";

Deno.test("encodePem and decodePem round-trip DER bytes", async (t) => {
  const der = Uint8Array.from({ length: 200 }, (_, i) => i);

  await t.step("encoding wraps base64 at 64 characters and ends with a newline", () => {
    const pem = encodePem("CERTIFICATE", der);
    const lines = pem.trimEnd().split("\n");
    assert.equal(lines[0], "-----BEGIN CERTIFICATE-----");
    assert.equal(lines.at(-1), "-----END CERTIFICATE-----");
    assert.ok(lines.slice(1, -1).every((line) => line.length <= 64));
    assert.equal(lines[1].length, 64);
    assert.ok(pem.endsWith("-----\n"));
  });

  await t.step("decoding returns every block in order, ignoring text between blocks", () => {
    const text = `subject=foo\n${encodePem("CERTIFICATE", der)}junk\n${
      encodePem("PRIVATE KEY", der.slice(0, 3))
    }`;
    const blocks = decodePem(text);
    assert.deepEqual(blocks.map((b) => b.label), ["CERTIFICATE", "PRIVATE KEY"]);
    assert.deepEqual([...blocks[0].der], [...der]);
    assert.deepEqual([...blocks[1].der], [0, 1, 2]);
  });

  await t.step("CRLF line endings decode the same", () => {
    const [block] = decodePem(encodePem("CERTIFICATE", der).replaceAll("\n", "\r\n"));
    assert.deepEqual([...block.der], [...der]);
  });
});

Deno.test("decodePem rejects malformed input naming the source", async (t) => {
  await t.step("no block at all", () => {
    assert.throws(() => decodePem("hello", '--tlsCertFile "x.pem"'), {
      name: "SyntaxError",
      message: 'No PEM block found in --tlsCertFile "x.pem"',
    });
  });
  await t.step("BEGIN and END labels differ", () => {
    assert.throws(() => decodePem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----\n"), {
      name: "SyntaxError",
      message: /"BEGIN CERTIFICATE" is closed by "END PRIVATE KEY"/,
    });
  });
  await t.step("invalid base64", () => {
    assert.throws(() => decodePem("-----BEGIN CERTIFICATE-----\n@@@@\n-----END CERTIFICATE-----\n"), {
      name: "SyntaxError",
      message: /not valid base64/,
    });
  });
  await t.step("encrypted keys with headers", () => {
    const text =
      "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nAAAA\n-----END RSA PRIVATE KEY-----\n";
    assert.throws(() => decodePem(text), {
      name: "SyntaxError",
      message: /encrypted keys are not supported/,
    });
  });
  await t.step("decodePemOf lists the labels it found when none is wanted", () => {
    assert.throws(
      () => decodePemOf(encodePem("PUBLIC KEY", new Uint8Array([1])), ["CERTIFICATE"], "ca.pem"),
      {
        name: "SyntaxError",
        message: 'No "CERTIFICATE" PEM block in ca.pem; found "PUBLIC KEY"',
      },
    );
  });
});

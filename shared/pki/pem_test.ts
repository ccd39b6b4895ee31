import assert from "node:assert/strict";
import fc from "fast-check";
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

/** What decodePem answered: each block's label and bytes, or the message it threw. */
function outcome(decode: () => { label: string; der: Uint8Array }[]): string {
  try {
    return JSON.stringify(decode().map((b) => [b.label, [...b.der]]));
  } catch (error) {
    return `throws ${(error as Error).message}`;
  }
}

/** The blocks as the regular expression decodePem used before found them, decoded the same way: the oracle. */
function decodeByExpression(text: string): { label: string; der: Uint8Array }[] {
  const blocks: { label: string; der: Uint8Array }[] = [];
  for (
    const [, begin, body, end] of text.matchAll(
      /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END ([A-Z0-9 ]+)-----/g,
    )
  ) {
    if (begin !== end) {
      throw new SyntaxError(`Malformed PEM in x: "BEGIN ${begin}" is closed by "END ${end}"`);
    }
    const base64 = body.replace(/\s+/g, "");
    if (base64.includes(":")) {
      throw new SyntaxError(
        `Unsupported PEM in x: "${begin}" has headers (encrypted keys are not supported)`,
      );
    }
    let binary: string;
    try {
      binary = atob(base64);
    } catch {
      throw new SyntaxError(`Malformed PEM in x: "${begin}" block is not valid base64`);
    }
    blocks.push({ label: begin, der: Uint8Array.from(binary, (c) => c.charCodeAt(0)) });
  }
  if (blocks.length === 0) throw new SyntaxError("No PEM block found in x");
  return blocks;
}

Deno.test("decodePem finds the blocks the PEM expression finds, in any arrangement of markers and labels", () => {
  const token = fc.constantFrom(
    "-----BEGIN ",
    "-----END ",
    "-----",
    "-",
    "CERTIFICATE",
    "KEY",
    "A",
    " ",
    "a",
    "\n",
    "QUFB",
    "AA==",
    ":",
    "@",
  );
  fc.assert(
    fc.property(fc.array(token, { maxLength: 30 }), (tokens) => {
      const text = tokens.join("");
      assert.equal(
        outcome(() => decodePem(text, "x")),
        outcome(() => decodeByExpression(text)),
        JSON.stringify(text),
      );
    }),
    { numRuns: 20_000 },
  );
});

Deno.test("decodePem reads a megabyte of BEGIN markers that no END closes, and a megabyte of ENDs that close none", () => {
  // The expression looked for an END from every BEGIN again: 256 KiB of these took 0.7 s, 1 MiB about 11 s.
  const begins = "-----BEGIN A-----".repeat(64 * 1024);
  assert.throws(() => decodePem(begins, "x"), { name: "SyntaxError", message: "No PEM block found in x" });
  // The block runs to the one END whose label is a label: the body holds the others, and is not base64.
  const ends = `-----BEGIN A-----QUFB${"-----END a-----".repeat(64 * 1024)}-----END A-----`;
  assert.throws(() => decodePem(ends, "x"), {
    name: "SyntaxError",
    message: 'Malformed PEM in x: "A" block is not valid base64',
  });
  const unlabelled = "-----BEGIN a-----".repeat(64 * 1024);
  assert.deepEqual(
    decodePem(`${unlabelled}-----BEGIN A-----QUFB-----END A-----`, "x").map((b) => [...b.der]),
    [
      [65, 65, 65],
    ],
  );
});

/** One PEM block: its label (`CERTIFICATE`, `PRIVATE KEY`, …) and its DER bytes. */
export interface PemBlock {
  /** The block's label, between `BEGIN ` and the dashes. */
  readonly label: string;
  /** The base64-decoded content. */
  readonly der: Uint8Array<ArrayBuffer>;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END ([A-Z0-9 ]+)-----/g;

/** Encodes DER bytes as a PEM block with 64-character lines and a trailing newline. */
export function encodePem(label: string, der: Uint8Array | ArrayBuffer): string {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/**
 * Decodes every PEM block in `text`, in order; text between blocks is ignored as RFC 7468 allows.
 * Throws SyntaxError naming `source` (a file name or flag) when there is no block or a block is malformed.
 */
export function decodePem(text: string, source = "PEM input"): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(BLOCK)) {
    const [, begin, body, end] = match;
    if (begin !== end) {
      throw new SyntaxError(`Malformed PEM in ${source}: "BEGIN ${begin}" is closed by "END ${end}"`);
    }
    const base64 = body.replace(/\s+/g, "");
    if (base64.includes(":")) {
      throw new SyntaxError(
        `Unsupported PEM in ${source}: "${begin}" has headers (encrypted keys are not supported)`,
      );
    }
    let binary: string;
    try {
      binary = atob(base64);
    } catch (error) {
      throw new SyntaxError(`Malformed PEM in ${source}: "${begin}" block is not valid base64`, {
        cause: error,
      });
    }
    blocks.push({ label: begin, der: Uint8Array.from(binary, (c) => c.charCodeAt(0)) });
  }
  if (blocks.length === 0) throw new SyntaxError(`No PEM block found in ${source}`);
  return blocks;
}

/** Decodes the blocks of `text` that carry one of `labels`; throws SyntaxError if there is none. */
export function decodePemOf(text: string, labels: readonly string[], source = "PEM input"): PemBlock[] {
  const all = decodePem(text, source);
  const wanted = all.filter((b) => labels.includes(b.label));
  if (wanted.length === 0) {
    const found = [...new Set(all.map((b) => `"${b.label}"`))].join(", ");
    throw new SyntaxError(
      `No ${labels.map((l) => `"${l}"`).join(" or ")} PEM block in ${source}; found ${found}`,
    );
  }
  return wanted;
}

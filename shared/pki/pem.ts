/** One PEM block: its label (`CERTIFICATE`, `PRIVATE KEY`, …) and its DER bytes. */
export interface PemBlock {
  /** The block's label, between `BEGIN ` and the dashes. */
  readonly label: string;
  /** The base64-decoded content. */
  readonly der: Uint8Array<ArrayBuffer>;
}

const BEGIN = "-----BEGIN ";
const END = "-----END ";
const DASHES = "-----";

/** Whether `code` may be in a label: `[A-Z0-9 ]`. */
function isLabelChar(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || code === 0x20;
}

/** Where the label starting at `from` ends: a run of `[A-Z0-9 ]` followed by five dashes; -1 when none is. */
function labelEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && isLabelChar(text.charCodeAt(i))) i++;
  return i > from && text.startsWith(DASHES, i) ? i : -1;
}

/**
 * Each `-----BEGIN L-----body-----END M-----` of `text`, left to right, the body as short as it can be: what
 * `/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END ([A-Z0-9 ]+)-----/g` finds, in one pass. That expression
 * looks for an END from every BEGIN again, so text of many BEGINs and no END took time in the square of its
 * length: a Secret of 1 MiB would have held the event loop for about 11 s.
 */
function* pemMatches(text: string): Generator<readonly [begin: string, body: string, end: string]> {
  let from = 0;
  for (;;) {
    const begin = text.indexOf(BEGIN, from);
    if (begin < 0) return;
    const labelStop = labelEnd(text, begin + BEGIN.length);
    if (labelStop < 0) {
      from = begin + 1;
      continue;
    }
    const bodyStart = labelStop + DASHES.length;
    let end = text.indexOf(END, bodyStart);
    let endStop = -1;
    while (end >= 0 && (endStop = labelEnd(text, end + END.length)) < 0) end = text.indexOf(END, end + 1);
    // No END closes this block; a later BEGIN has only fewer ENDs after it.
    if (end < 0) return;
    yield [
      text.slice(begin + BEGIN.length, labelStop),
      text.slice(bodyStart, end),
      text.slice(end + END.length, endStop),
    ];
    from = endStop + DASHES.length;
  }
}

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
  for (const [begin, body, end] of pemMatches(text)) {
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

// Test support: runs the real `openssl` binary and manages temp dirs. Only tests import this file.

/** The outcome of one openssl run. */
export interface OpensslResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `openssl args…`, feeding `stdin` when given; never throws on a non-zero exit. */
export async function openssl(args: string[], stdin?: string): Promise<OpensslResult> {
  const child = new Deno.Command("openssl", {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** Runs openssl and returns stdout, throwing with stderr when it fails. */
export async function opensslOk(args: string[], stdin?: string): Promise<string> {
  const result = await openssl(args, stdin);
  if (result.code !== 0) {
    throw new Error(`openssl ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  }
  return result.stdout;
}

/** `openssl x509 -noout -text` of a PEM certificate. */
export function certificateText(pem: string): Promise<string> {
  return opensslOk(["x509", "-noout", "-text"], pem);
}

/** Runs `fn` with a fresh temp dir that is removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "mesh-pki-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** `openssl verify -CAfile ca extra… leaf` with the PEMs written to `dir`; returns the raw result. */
export async function verifyChain(
  dir: string,
  caPem: string,
  leafPem: string,
  extraArgs: string[] = [],
): Promise<OpensslResult> {
  const caFile = `${dir}/ca-${crypto.randomUUID()}.pem`;
  const leafFile = `${dir}/leaf-${crypto.randomUUID()}.pem`;
  await Deno.writeTextFile(caFile, caPem);
  await Deno.writeTextFile(leafFile, leafPem);
  return await openssl(["verify", "-CAfile", caFile, ...extraArgs, leafFile]);
}

/** A self-signed serving certificate for 127.0.0.1 and its key, as PEM. */
export async function selfSignedLoopback(): Promise<{ cert: string; key: string }> {
  const dir = await Deno.makeTempDir({ prefix: "self_signed_" });
  try {
    await opensslOk([
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-addext",
      "basicConstraints=critical,CA:FALSE",
      "-keyout",
      `${dir}/key.pem`,
      "-out",
      `${dir}/cert.pem`,
    ]);
    return {
      cert: await Deno.readTextFile(`${dir}/cert.pem`),
      key: await Deno.readTextFile(`${dir}/key.pem`),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

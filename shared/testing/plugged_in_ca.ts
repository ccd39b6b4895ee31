/**
 * Test support: a plugged-in CA as an operator would provide it in `ROOT_CA_DIR` (a root, and an intermediate
 * that signs), written as `ca-cert.pem`, `ca-key.pem`, `cert-chain.pem` and `root-cert.pem`. Only tests import
 * this file.
 *
 * @module
 */
import { x509 } from "../pki/_x509.ts";
import {
  type CertificateAuthority,
  certificatesToPem,
  createSelfSignedCa,
  exportPrivateKeyPem,
  generateKeyPair,
  loadCertificateAuthority,
} from "../pki/mod.ts";

/** The root and the intermediate of a plugged-in CA, and the PEM files' contents. */
export interface PluggedInCa {
  readonly root: CertificateAuthority;
  readonly intermediate: CertificateAuthority;
  /** The four files by name. */
  readonly files: Readonly<Record<"ca-cert.pem" | "ca-key.pem" | "cert-chain.pem" | "root-cert.pem", string>>;
}

/** Makes a root and an intermediate CA valid for `ttlMs`. */
export async function makePluggedInCa(ttlMs: number): Promise<PluggedInCa> {
  const root = await createSelfSignedCa({ org: "example root", ttlMs: ttlMs * 2 });
  const keys = await generateKeyPair({ algorithm: "RSA" });
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: "0a",
    subject: "CN=mesh intermediate",
    issuer: root.certificate.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + ttlMs),
    signingKey: root.keys.privateKey,
    publicKey: keys.publicKey,
    signingAlgorithm: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const caPem = certificatesToPem([certificate]);
  const keyPem = await exportPrivateKeyPem(keys.privateKey);
  return {
    root,
    intermediate: await loadCertificateAuthority(caPem, keyPem),
    files: {
      "ca-cert.pem": caPem,
      "ca-key.pem": keyPem,
      "cert-chain.pem": caPem + root.certificatePem,
      "root-cert.pem": root.certificatePem,
    },
  };
}

/** Writes the four files into `dir`. */
export async function writePluggedInCa(ca: PluggedInCa, dir: string): Promise<void> {
  for (const [name, text] of Object.entries(ca.files)) await Deno.writeTextFile(`${dir}/${name}`, text);
}

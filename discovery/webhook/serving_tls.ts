import type { Logger } from "@mesh/shared/log/logger";
import { certifiesKey, parseCertificatesPem } from "@mesh/shared/pki/certificate_pem";
import { importPrivateKeyPem } from "@mesh/shared/pki/private_key_pem";
import { selfSignedServingCert } from "@mesh/shared/pki/serving_certificate";
import { subjectAltNamesOf } from "@mesh/shared/pki/subject_alt_names";

/** The webhook's TLS material as PEM, and where it came from. */
export interface ServingTls {
  /** PEM certificate chain, leaf first. */
  readonly cert: string;
  /** PEM private key of the leaf certificate. */
  readonly key: string;
  /** The CA certificate clients must trust; set for certificates made here (self-signed or by the mesh CA). */
  readonly caPem?: string;
  /**
   * `files` when read from `--tlsCertFile`/`--tlsKeyFile`, `mesh CA` when the built-in CA issued it,
   * `self-signed` when made in memory.
   */
  readonly source: "files" | "mesh CA" | "self-signed";
}

/** The serving certificate could not be loaded; the message names the flag and the file. */
export class ServingTlsError extends Error {
  /** `options.cause` holds the underlying error, when there is one. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ServingTlsError";
  }
}

/** Names on the self-signed webhook certificate: the service the orchestrator calls, and loopback. */
export function webhookServingNames(namespace = "mesh-system"): string[] {
  return [`meshd.${namespace}.svc`, "localhost", "127.0.0.1"];
}

/** Options of `loadServingTls`: the two flags (empty means unset) and the names for a self-signed certificate. */
export interface ServingTlsOptions {
  /** `--tlsCertFile`; set together with `tlsKeyFile` or not at all. */
  readonly tlsCertFile?: string;
  /** `--tlsKeyFile`; set together with `tlsCertFile` or not at all. */
  readonly tlsKeyFile?: string;
  /** Subject alternative names of a self-signed certificate; defaults to {@linkcode webhookServingNames}. */
  readonly servingNames?: readonly string[];
  /** Where the choice of certificate is logged. */
  readonly log: Logger;
  /** Issues a certificate for the serving names (the built-in CA); used when no files are given. */
  readonly issue?: (names: readonly string[]) => Promise<{ cert: string; key: string; caPem: string }>;
}

/**
 * Loads `--tlsCertFile`/`--tlsKeyFile` when given (both or neither), checking that the files parse and that the
 * key belongs to the certificate; otherwise has the built-in CA issue one (`issue`), or, without a CA, makes a
 * self-signed certificate in memory. Throws ServingTlsError naming the flag and file.
 */
export async function loadServingTls(options: ServingTlsOptions): Promise<ServingTls> {
  const certFile = options.tlsCertFile || undefined;
  const keyFile = options.tlsKeyFile || undefined;
  if (certFile === undefined && keyFile === undefined && options.issue !== undefined) {
    const names = options.servingNames ?? webhookServingNames();
    const issued = await options.issue(names);
    options.log.info("No --tlsCertFile/--tlsKeyFile given: serving a certificate the mesh CA issued", {
      names: names.join(","),
    });
    return { ...issued, source: "mesh CA" };
  }
  if (certFile === undefined && keyFile === undefined) {
    const names = options.servingNames ?? webhookServingNames();
    const serving = await selfSignedServingCert(names);
    options.log.info(
      "No --tlsCertFile/--tlsKeyFile given: serving a self-signed certificate kept in memory",
      {
        names: names.join(","),
        notAfter: serving.notAfter.toISOString(),
      },
    );
    return { cert: serving.certPem, key: serving.keyPem, caPem: serving.caPem, source: "self-signed" };
  }
  if (certFile === undefined || keyFile === undefined) {
    const [set, unset] = certFile === undefined
      ? ["--tlsKeyFile", "--tlsCertFile"]
      : ["--tlsCertFile", "--tlsKeyFile"];
    throw new ServingTlsError(`${set} is set but ${unset} is not: give both or neither`);
  }
  const cert = await readPem("--tlsCertFile", certFile);
  const key = await readPem("--tlsKeyFile", keyFile);
  const certSource = `--tlsCertFile "${certFile}"`;
  const keySource = `--tlsKeyFile "${keyFile}"`;
  let leaf;
  try {
    [leaf] = parseCertificatesPem(cert, certSource);
  } catch (error) {
    throw new ServingTlsError((error as Error).message, { cause: error });
  }
  let keys: CryptoKeyPair | undefined;
  try {
    keys = await importPrivateKeyPem(key, keySource);
  } catch (error) {
    // A key type we cannot parse (e.g. Ed25519) may still be one the TLS stack serves: let it decide.
    if (!(error instanceof TypeError)) throw new ServingTlsError((error as Error).message, { cause: error });
    options.log.warn("Cannot check that --tlsKeyFile matches --tlsCertFile", { error: error.message });
  }
  if (keys && !await certifiesKey(leaf, keys.publicKey)) {
    throw new ServingTlsError(
      `${keySource} does not hold the private key of the certificate in ${certSource}`,
    );
  }
  if (leaf.notAfter < new Date()) {
    options.log.warn("Serving certificate has expired", {
      file: certFile,
      notAfter: leaf.notAfter.toISOString(),
    });
  }
  const sans = subjectAltNamesOf(leaf);
  options.log.info("Serving the certificate from --tlsCertFile", {
    file: certFile,
    names: [...sans.dnsNames, ...sans.ipAddresses].join(","),
    notAfter: leaf.notAfter.toISOString(),
  });
  return { cert, key, source: "files" };
}

async function readPem(flag: string, file: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (error) {
    throw new ServingTlsError(`Cannot read ${flag} "${file}": ${(error as Error).message}`, { cause: error });
  }
}

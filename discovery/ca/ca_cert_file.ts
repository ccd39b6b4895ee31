/**
 * `--caCertFile`: the CA certificates of a serving certificate given by `--tlsCertFile`, read and checked at
 * startup.
 *
 * @module
 */
import { parseCertificatesPem } from "@mesh/shared/pki";

/**
 * Reads the PEM certificates in `path`; they are served as roots of the discovery server and trusted for
 * client certificates on the secure port.
 *
 * @throws {Error} naming the flag and the file when it cannot be read or holds no certificate
 */
export async function readCaCertFile(path: string, flag = "--caCertFile"): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new Error(`Cannot read ${flag} "${path}": ${(error as Error).message}`, { cause: error });
  }
  try {
    const certificates = parseCertificatesPem(text, `${flag} ${path}`);
    if (certificates.length === 0) throw new Error("no certificate in it");
  } catch (error) {
    throw new Error(
      `Invalid ${flag} "${path}": ${(error as Error).message}; expected PEM CA certificates`,
      { cause: error },
    );
  }
  return text.endsWith("\n") ? text : `${text}\n`;
}

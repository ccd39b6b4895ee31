/**
 * The mesh config files named by `--meshConfig` and `--networksConfig`, read once before any port opens. A file
 * that exists must be valid: serving the defaults instead would silently change the whole mesh's behaviour. A
 * missing file means the defaults (the file watcher says so when it starts).
 *
 * @module
 */
import { MeshConfigError } from "@mesh/shared/config/mesh/mesh_config_error";
import { parseMeshNetworks } from "@mesh/shared/config/mesh/mesh_networks";
import { parseMeshConfig } from "@mesh/shared/config/mesh/parse_mesh_config";

/** A mesh config file named by a flag exists but cannot be used. */
export class MeshFileError extends Error {
  /** `flag` named `file`; `cause` says what is wrong with it. */
  constructor(readonly flag: string, readonly file: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "MeshFileError";
  }
}

/**
 * Checks each named file that exists.
 *
 * @throws {MeshFileError} naming the flag and file, with every problem found in it
 */
export async function checkMeshFiles(files: { meshConfig: string; networksConfig: string }): Promise<void> {
  await check("--meshConfig", files.meshConfig, (text, file) => parseMeshConfig(text, file));
  await check("--networksConfig", files.networksConfig, (text, file) => parseMeshNetworks(text, file));
}

async function check(
  flag: string,
  file: string,
  parse: (text: string, file: string) => unknown,
): Promise<void> {
  if (file === "") return;
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (cause) {
    if (cause instanceof Deno.errors.NotFound) return;
    throw new MeshFileError(flag, file, `Cannot read ${flag} "${file}": ${(cause as Error).message}`, {
      cause,
    });
  }
  try {
    parse(text, file);
  } catch (cause) {
    const issues = cause instanceof MeshConfigError ? cause.issues.join("; ") : (cause as Error).message;
    throw new MeshFileError(
      flag,
      file,
      `Invalid mesh config file ${flag} "${file}": ${issues}; fix the file or remove it to use the defaults`,
      { cause },
    );
  }
}

/** Looks up a user's numeric ids in `/etc/passwd`, for the default proxy uid/gid. */

/** The ids of one user account. */
export interface UserIds {
  /** Numeric user id. */
  readonly uid: number;
  /** Numeric primary group id. */
  readonly gid: number;
}

/** Finds `name` in passwd-format text (`name:x:uid:gid:...`); undefined when absent or malformed. */
export function findPasswdUser(passwdText: string, name: string): UserIds | undefined {
  for (const line of passwdText.split("\n")) {
    const fields = line.split(":");
    if (fields.length < 4 || fields[0] !== name) continue;
    if (!/^\d+$/.test(fields[2]) || !/^\d+$/.test(fields[3])) return undefined;
    return Object.freeze({ uid: Number(fields[2]), gid: Number(fields[3]) });
  }
  return undefined;
}

/**
 * Reads `path` (default `/etc/passwd`) and finds `name`; undefined when the file is unreadable or the user
 * absent, since callers then fall back to the default id. Needs `--allow-read` for the file.
 */
export function lookupPasswdUser(name: string, path = "/etc/passwd"): UserIds | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.PermissionDenied) {
      return undefined;
    }
    throw error;
  }
  return findPasswdUser(text, name);
}

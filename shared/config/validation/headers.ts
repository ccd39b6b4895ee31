const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Checks a header name used in a match: a non-empty HTTP token, optionally a `:`-prefixed pseudo-header
 * (`:authority`). Returns a message when invalid.
 */
export function checkHeaderMatchName(name: string): string | undefined {
  if (name === "") return "header name cannot be empty";
  const bare = name.startsWith(":") ? name.slice(1) : name;
  return TOKEN.test(bare) ? undefined : `header name "${name}" is not a valid HTTP header name`;
}

/**
 * Checks a header name that is added, set or removed: a non-empty HTTP token; pseudo-headers (`:path`)
 * cannot be manipulated (the proxy rejects them). Returns a message when invalid.
 */
export function checkHeaderOperationName(name: string): string | undefined {
  if (name === "") return "header name cannot be empty";
  if (name.startsWith(":")) return `header "${name}" cannot be modified: pseudo-headers are read-only`;
  return TOKEN.test(name) ? undefined : `header name "${name}" is not a valid HTTP header name`;
}

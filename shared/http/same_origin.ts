/**
 * Refuses state changes a browser sends on behalf of another site: a page elsewhere (another host, or another
 * port of this one) must not change a log level by having the operator's browser send the request.
 *
 * @module
 */

/**
 * Why `request` is not from this server's own pages, or undefined when it is (or comes from a program such
 * as curl, which sends neither header). Browsers send `Sec-Fetch-Site`, and `Origin` on every PUT/POST.
 */
export function crossSiteReason(request: Request): string | undefined {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") {
    return `Refused a ${site} request: changes are accepted only from this server's own pages`;
  }
  const origin = request.headers.get("origin");
  if (origin === null) return undefined;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (host === undefined || host === "" || host !== new URL(request.url).host) {
    return "Refused a request from another origin: changes are accepted only from this server's own pages";
  }
  return undefined;
}

import { type Html, layout, type NavLink } from "@mesh/shared/http/html";

/** Path of the ControlZ stylesheet. */
export const CTRLZ_STYLESHEET = "/static/mesh.css";

/** Path of the ControlZ script (live memory, scope changes, metric search). */
export const CTRLZ_SCRIPT = "/static/ctrlz.js";

/** The ControlZ pages, in navigation order. */
export const CTRLZ_NAV: readonly NavLink[] = [
  { href: "/", label: "Home" },
  { href: "/scopez/", label: "Logging scopes" },
  { href: "/memz/", label: "Memory" },
  { href: "/procz/", label: "Process" },
  { href: "/envz/", label: "Environment" },
  { href: "/argsz/", label: "Arguments" },
  { href: "/metricz/", label: "Metrics" },
  { href: "/versionz/", label: "Version" },
];

/** A ControlZ page: the shared layout with ControlZ's navigation, stylesheet and script. */
export function ctrlzPage(title: string, current: string, body: Html): Html {
  return layout({
    title,
    site: "ControlZ",
    nav: CTRLZ_NAV,
    current,
    stylesheet: CTRLZ_STYLESHEET,
    scripts: [CTRLZ_SCRIPT],
    body,
  });
}

import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, integerAt, objectAt } from "../validation/fields.ts";
import { isSet } from "../validation/values.ts";
import { type Destination, destinationAt } from "./destination.ts";
import { type Headers, headersAt } from "./header_operations.ts";

/** A weighted destination of a TCP or TLS route. */
export interface RouteDestination {
  /** Where the traffic goes. */
  readonly destination: Destination;
  /** Share of traffic in percent; with several destinations the weights must add up to 100. */
  readonly weight?: number;
}

/** A weighted destination of an HTTP route, with its own header manipulation. */
export interface HTTPRouteDestination extends RouteDestination {
  /** Header changes for requests sent to, and responses from, this destination. */
  readonly headers?: Headers;
}

/**
 * Validates a list of weighted destinations at `path`: each has a valid destination and a weight in
 * 0..100; with more than one destination the weights must total 100. `http` allows per-destination headers.
 */
export function routeDestinationsAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  http: boolean,
): number {
  const items = arrayAt(report, path, value);
  let total = 0;
  for (const [i, raw] of items.entries()) {
    const at = childPath(path, i);
    const obj = objectAt(
      report,
      at,
      raw,
      http ? ["destination", "weight", "headers"] : ["destination", "weight"],
    );
    if (obj === undefined) continue;
    if (!isSet(obj.destination)) report.error(childPath(at, "destination"), "destination is required");
    else destinationAt(report, childPath(at, "destination"), obj.destination);
    const weight = integerAt(report, childPath(at, "weight"), obj.weight) ?? 0;
    if (weight < 0 || weight > 100) {
      report.error(childPath(at, "weight"), `weight must be between 0 and 100, got ${weight}`);
    }
    total += weight;
    if (http) headersAt(report, childPath(at, "headers"), obj.headers);
  }
  if (items.length > 1 && total !== 100) {
    report.error(path, `total destination weight must be 100, got ${total}`);
  }
  return items.length;
}

import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, booleanAt, describe, objectAt, stringAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { validateWorkloadSelector, type WorkloadSelector } from "./workload_selector.ts";
import { parseJwksUri } from "./jwks_uri.ts";
import { parseInlineJwks } from "./inline_jwks.ts";
import { checkHeaderMatchName, checkHeaderOperationName } from "../validation/headers.ts";

/** A header a JWT is read from, e.g. `{ name: "x-jwt-assertion", prefix: "Bearer " }`. */
export interface JwtHeader {
  /** Header name, matched case-insensitively. */
  readonly name: string;
  /** Stripped from the header value before the token is parsed. */
  readonly prefix?: string;
}

/** How tokens of one issuer are verified and where they are read from. */
export interface JwtRule {
  /** Expected `iss` of the token; required. */
  readonly issuer: string;
  /** Accepted `aud` values; absent means the token's audience is not checked. */
  readonly audiences?: readonly string[];
  /** Where the keys are fetched from; absent (and no `jwks`): from the issuer's OpenID discovery document. */
  readonly jwksUri?: string;
  /** Inline JWKS as JSON text; takes precedence over `jwksUri`. */
  readonly jwks?: string;
  /** Absent: `Authorization: Bearer <token>`. */
  readonly fromHeaders?: readonly JwtHeader[];
  /** Query parameters; absent: `access_token`. */
  readonly fromParams?: readonly string[];
  /** Header that receives the verified payload, base64url-encoded. */
  readonly outputPayloadToHeader?: string;
  /** Keep the token in the request forwarded upstream. */
  readonly forwardOriginalToken?: boolean;
}

/** Spec of a RequestAuthentication (security.mesh.io/v1beta1), with Istio 1.9's fields and meaning. */
export interface RequestAuthenticationSpec {
  /**
   * Workloads the policy applies to; absent means every workload of its namespace (or of the mesh, in the
   * root namespace).
   */
  readonly selector?: WorkloadSelector;
  /** One rule per accepted issuer. */
  readonly jwtRules?: readonly JwtRule[];
}

const SPEC_FIELDS = ["selector", "jwtRules"] as const;
const RULE_FIELDS = [
  "issuer",
  "audiences",
  "jwksUri",
  "jwks",
  "fromHeaders",
  "fromParams",
  "outputPayloadToHeader",
  "forwardOriginalToken",
] as const;
const HEADER_FIELDS = ["name", "prefix"] as const;

/**
 * Validates a RequestAuthentication spec as strictly as Istio 1.9: selector labels and every JWT rule
 * (issuer, audiences, JWKS location, token locations, output header).
 */
export function validateRequestAuthentication(
  spec: unknown,
  report: ValidationReport,
  _ctx: ValidationContext,
): void {
  // A document without a spec has every field at its default, as in Istio.
  const s = objectAt(report, "spec", spec ?? {}, SPEC_FIELDS);
  if (s === undefined) return;
  validateWorkloadSelector(report, "spec.selector", s.selector);
  const rules = arrayAt(report, "spec.jwtRules", s.jwtRules);
  if (rules.length === 0 && (s.jwtRules === undefined || s.jwtRules === null || Array.isArray(s.jwtRules))) {
    report.warn("spec.jwtRules", "no JWT rules: the policy has no effect");
  }
  rules.forEach((rule, i) => validateJwtRule(report, childPath("spec.jwtRules", i), rule));
}

/** Validates one JWT rule at `path`. */
function validateJwtRule(report: ValidationReport, path: string, value: unknown): void {
  const rule = objectAt(report, path, value, RULE_FIELDS);
  if (rule === undefined) return;

  const issuerPath = childPath(path, "issuer");
  const issuer = stringAt(report, issuerPath, rule.issuer);
  if (issuer === "" || rule.issuer === undefined || rule.issuer === null) {
    report.error(issuerPath, "is required");
  }

  nonEmptyStringsAt(report, childPath(path, "audiences"), rule.audiences);

  const uriPath = childPath(path, "jwksUri");
  const jwksUri = stringAt(report, uriPath, rule.jwksUri);
  if (jwksUri !== undefined && jwksUri !== "") {
    const parsed = parseJwksUri(jwksUri);
    if ("problem" in parsed) report.error(uriPath, parsed.problem);
  }

  const jwksPath = childPath(path, "jwks");
  const jwks = stringAt(report, jwksPath, rule.jwks);
  if (jwks !== undefined && jwks !== "") {
    const parsed = parseInlineJwks(jwks);
    if ("problem" in parsed) report.error(jwksPath, `JWKS ${parsed.problem}`);
    else if (parsed.keys === 0) {
      report.warn(jwksPath, "JWKS has no keys: every token of this issuer is rejected");
    }
    if (jwksUri) report.warn(uriPath, "is ignored because the inline jwks takes precedence");
  }

  const headersPath = childPath(path, "fromHeaders");
  arrayAt(report, headersPath, rule.fromHeaders).forEach((entry, i) => {
    const at = childPath(headersPath, i);
    const header = objectAt(report, at, entry, HEADER_FIELDS);
    if (header === undefined) return;
    headerNameAt(report, childPath(at, "name"), header.name, true, checkHeaderMatchName);
    stringAt(report, childPath(at, "prefix"), header.prefix);
  });

  nonEmptyStringsAt(report, childPath(path, "fromParams"), rule.fromParams);
  headerNameAt(
    report,
    childPath(path, "outputPayloadToHeader"),
    rule.outputPayloadToHeader,
    false,
    checkHeaderOperationName,
  );
  booleanAt(report, childPath(path, "forwardOriginalToken"), rule.forwardOriginalToken);
}

/** Checks a header name at `path` with `check`; an empty optional name means unset, as in proto3. */
function headerNameAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  required: boolean,
  check: (name: string) => string | undefined,
): void {
  const name = stringAt(report, path, value);
  if (name === undefined) {
    if (required && (value === undefined || value === null)) report.error(path, "is required");
    return;
  }
  if (name === "" && !required) return;
  const problem = check(name);
  if (problem) report.error(path, problem);
}

/** Checks a list of strings at `path` where every item must be non-empty. */
function nonEmptyStringsAt(report: ValidationReport, path: string, value: unknown): void {
  arrayAt(report, path, value).forEach((item, i) => {
    const at = childPath(path, i);
    if (typeof item !== "string") report.error(at, `must be a string, got ${describe(item)}`);
    else if (item === "") report.error(at, "must not be empty");
  });
}

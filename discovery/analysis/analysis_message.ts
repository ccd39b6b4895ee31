/**
 * The analysis messages: the reference's catalogue (code, level, template) and one message as analyzers report
 * it, about one resource.
 * @module
 */

/** How serious a message is, as the reference ranks them (Error first). */
export type MessageLevel = "Error" | "Warning" | "Info";

/** One kind of message of the catalogue. */
export interface MessageType {
  /** The reference's name, such as `ReferencedResourceNotFound`. */
  readonly name: string;
  /** The reference's code, such as `IST0101`; the number part is the identity. */
  readonly code: string;
  readonly level: MessageLevel;
  /** A Go format string (`%s`, `%q`, `%v`, `%d`, `%t`) the arguments fill. */
  readonly template: string;
}

function type(name: string, code: string, level: MessageLevel, template: string): MessageType {
  return Object.freeze({ name, code, level, template });
}

/** The message types the analyzers emit, with the reference's codes, levels and texts (renamed). */
export const MESSAGES = Object.freeze({
  InternalError: type("InternalError", "IST0001", "Error", "Internal error: %v"),
  Deprecated: type("Deprecated", "IST0002", "Warning", "Deprecated: %s"),
  ReferencedResourceNotFound: type(
    "ReferencedResourceNotFound",
    "IST0101",
    "Error",
    "Referenced %s not found: %q",
  ),
  NamespaceNotInjected: type(
    "NamespaceNotInjected",
    "IST0102",
    "Info",
    "The namespace is not enabled for Mesh injection. Run 'kubectl label namespace %s mesh-injection=enabled' " +
      "to enable it, or 'kubectl label namespace %s mesh-injection=disabled' to explicitly mark it as not " +
      "needing injection.",
  ),
  PodMissingProxy: type(
    "PodMissingProxy",
    "IST0103",
    "Warning",
    "The pod is missing the Mesh proxy. This can often be resolved by restarting or redeploying the workload.",
  ),
  GatewayPortNotOnWorkload: type(
    "GatewayPortNotOnWorkload",
    "IST0104",
    "Warning",
    "The gateway refers to a port that is not exposed on the workload (pod selector %s; port %d)",
  ),
  MeshProxyImageMismatch: type(
    "MeshProxyImageMismatch",
    "IST0105",
    "Warning",
    "The image of the Mesh proxy running on the pod does not match the image defined in the injection " +
      "configuration (pod image: %s; injection configuration image: %s). This often happens after upgrading " +
      "the Mesh control-plane and can be fixed by redeploying the pod.",
  ),
  SchemaValidationError: type("SchemaValidationError", "IST0106", "Error", "Schema validation error: %v"),
  MisplacedAnnotation: type(
    "MisplacedAnnotation",
    "IST0107",
    "Warning",
    "Misplaced annotation: %s can only be applied to %s",
  ),
  UnknownAnnotation: type("UnknownAnnotation", "IST0108", "Warning", "Unknown annotation: %s"),
  ConflictingMeshGatewayVirtualServiceHosts: type(
    "ConflictingMeshGatewayVirtualServiceHosts",
    "IST0109",
    "Error",
    "The VirtualServices %s associated with mesh gateway define the same host %s which can lead to undefined " +
      "behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.",
  ),
  ConflictingSidecarWorkloadSelectors: type(
    "ConflictingSidecarWorkloadSelectors",
    "IST0110",
    "Error",
    "The Sidecars %v in namespace %q select the same workload pod %q, which can lead to undefined behavior.",
  ),
  MultipleSidecarsWithoutWorkloadSelectors: type(
    "MultipleSidecarsWithoutWorkloadSelectors",
    "IST0111",
    "Error",
    "The Sidecars %v in namespace %q have no workload selector, which can lead to undefined behavior.",
  ),
  VirtualServiceDestinationPortSelectorRequired: type(
    "VirtualServiceDestinationPortSelectorRequired",
    "IST0112",
    "Error",
    "This VirtualService routes to a service %q that exposes multiple ports %v. Specifying a port in the " +
      "destination is required to disambiguate.",
  ),
  DeploymentAssociatedToMultipleServices: type(
    "DeploymentAssociatedToMultipleServices",
    "IST0116",
    "Warning",
    "This deployment %s is associated with multiple services using port %d but different protocols: %v",
  ),
  DeploymentRequiresServiceAssociated: type(
    "DeploymentRequiresServiceAssociated",
    "IST0117",
    "Warning",
    "No service associated with this deployment. Service mesh deployments must be associated with a service.",
  ),
  PortNameIsNotUnderNamingConvention: type(
    "PortNameIsNotUnderNamingConvention",
    "IST0118",
    "Info",
    "Port name %s (port: %d, targetPort: %s) doesn't follow the naming convention of Mesh port.",
  ),
  InvalidRegexp: type("InvalidRegexp", "IST0122", "Warning", "Field %q regular expression invalid: %q (%s)"),
  NamespaceMultipleInjectionLabels: type(
    "NamespaceMultipleInjectionLabels",
    "IST0123",
    "Warning",
    "The namespace has both new and legacy injection labels. Run 'kubectl label namespace %s mesh.io/rev-' " +
      "or 'kubectl label namespace %s mesh-injection-'",
  ),
  InvalidAnnotation: type("InvalidAnnotation", "IST0125", "Warning", "Invalid annotation %s: %s"),
  UnknownMeshNetworksServiceRegistry: type(
    "UnknownMeshNetworksServiceRegistry",
    "IST0126",
    "Error",
    "Unknown service registry %s in network %s",
  ),
  NoMatchingWorkloadsFound: type(
    "NoMatchingWorkloadsFound",
    "IST0127",
    "Warning",
    "No matching workloads for this resource with the following labels: %s",
  ),
  NoServerCertificateVerificationDestinationLevel: type(
    "NoServerCertificateVerificationDestinationLevel",
    "IST0128",
    "Error",
    "DestinationRule %s in namespace %s has TLS mode set to %s but no caCertificates are set to validate " +
      "server identity for host: %s",
  ),
  NoServerCertificateVerificationPortLevel: type(
    "NoServerCertificateVerificationPortLevel",
    "IST0129",
    "Warning",
    "DestinationRule %s in namespace %s has TLS mode set to %s but no caCertificates are set to validate " +
      "server identity for host: %s at port %s",
  ),
  VirtualServiceUnreachableRule: type(
    "VirtualServiceUnreachableRule",
    "IST0130",
    "Warning",
    "VirtualService rule %v not used (%s).",
  ),
  VirtualServiceIneffectiveMatch: type(
    "VirtualServiceIneffectiveMatch",
    "IST0131",
    "Info",
    "VirtualService rule %v match %v is not used (duplicates a match in rule %v).",
  ),
  VirtualServiceHostNotFoundInGateway: type(
    "VirtualServiceHostNotFoundInGateway",
    "IST0132",
    "Warning",
    "one or more host %v defined in VirtualService %s not found in Gateway %s.",
  ),
  SchemaWarning: type("SchemaWarning", "IST0133", "Warning", "Schema validation warning: %v"),
  ServiceEntryAddressesRequired: type(
    "ServiceEntryAddressesRequired",
    "IST0134",
    "Warning",
    "ServiceEntry addresses are required for this protocol.",
  ),
  DeprecatedAnnotation: type(
    "DeprecatedAnnotation",
    "IST0135",
    "Info",
    "Annotation %q has been deprecated and may not work in future Mesh versions.",
  ),
});

/** The resource a message is about. `namespace` is empty for cluster-scoped objects. */
export interface MessageOrigin {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** One finding about one resource. */
export interface AnalysisMessage {
  readonly code: string;
  /** The message type's name, such as `ReferencedResourceNotFound`. */
  readonly type: string;
  readonly level: MessageLevel;
  /** The rendered template. */
  readonly text: string;
  readonly origin: MessageOrigin;
}

/** A message argument: a string, a number, a boolean or a list of them. */
export type MessageArg = string | number | boolean | readonly (string | number)[];

/**
 * Items a message names from a list. Some messages go to every member of a group and name the whole group
 * (IST0109–IST0111): the reference's texts grow with the group, so a namespace of 10,000 Sidecars without a
 * selector made 10,000 messages of 10,000 names each, a gigabyte of text. Past this many, a message names the
 * first ones and counts the rest.
 */
export const MAX_LISTED_ITEMS = 20;

/** `items`, each rendered, joined by `separator`: the first {@link MAX_LISTED_ITEMS}, and `… (N in all)` past that. */
export function listedItems(
  items: readonly (string | number)[],
  separator: string,
  render: (item: string | number) => string = String,
): string {
  const listed = items.slice(0, MAX_LISTED_ITEMS).map(render).join(separator);
  return items.length <= MAX_LISTED_ITEMS ? listed : `${listed}${separator}… (${items.length} in all)`;
}

/** Go's `%q` of a string, close enough for messages: JSON quoting. */
function goQuote(value: MessageArg): string {
  return Array.isArray(value)
    ? `[${listedItems(value, " ", (v) => JSON.stringify(String(v)))}]`
    : JSON.stringify(String(value));
}

/** Go's `%v`: lists as `[a b]`, the rest as text. */
function goValue(value: MessageArg): string {
  return Array.isArray(value) ? `[${listedItems(value, " ")}]` : String(value);
}

/** Renders a Go format string with the verbs the catalogue uses. */
export function renderTemplate(template: string, args: readonly MessageArg[]): string {
  let next = 0;
  return template.replace(/%([sqvdt%])/g, (_all, verb: string) => {
    if (verb === "%") return "%";
    const arg = args[next++];
    if (arg === undefined) return `%!${verb}(MISSING)`;
    return verb === "q" ? goQuote(arg) : goValue(arg);
  });
}

/** Builds a message of `type` about `origin`. */
export function newMessage(type: MessageType, origin: MessageOrigin, ...args: MessageArg[]): AnalysisMessage {
  return Object.freeze({
    code: type.code,
    type: type.name,
    level: type.level,
    text: renderTemplate(type.template, args),
    origin,
  });
}

/** The reference's name of a resource in messages: `Kind name.namespace`, or `Kind name` without one. */
export function friendlyName(origin: MessageOrigin): string {
  return origin.namespace === ""
    ? `${origin.kind} ${origin.name}`
    : `${origin.kind} ${origin.name}.${origin.namespace}`;
}

/** The key of a resource in a message map: `Kind/namespace/name` (the store's key shape). */
export function originKey(origin: MessageOrigin): string {
  return `${origin.kind}/${origin.namespace}/${origin.name}`;
}

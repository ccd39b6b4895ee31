/**
 * The annotations of the mesh's domains the reference knows (its annotation table at the version it pins,
 * renamed): the kinds each applies to (`Any` for every kind) and whether it is deprecated.
 * @module
 */

/** What the table says of one annotation. */
export interface KnownAnnotation {
  /** Kinds it may be set on; `Any` for every kind. */
  readonly resources: readonly string[];
  readonly deprecated?: boolean;
}

/** Every known annotation, by name. */
export const KNOWN_ANNOTATIONS: ReadonlyMap<string, KnownAnnotation> = new Map<string, KnownAnnotation>([
  ["prometheus.mesh.io/merge-metrics", { resources: ["Pod"] }],
  ["alpha.mesh.io/kubernetes-serviceaccounts", { resources: ["Service"], deprecated: true }],
  ["alpha.mesh.io/canonical-serviceaccounts", { resources: ["Service"], deprecated: true }],
  ["alpha.mesh.io/identity", { resources: ["Pod"], deprecated: true }],
  ["networking.mesh.io/exportTo", { resources: ["Service"] }],
  ["security.mesh.io/tlsMode", { resources: ["Pod"], deprecated: true }],
  ["sidecar.mesh.io/inject", { resources: ["Pod"] }],
  ["sidecar.mesh.io/status", { resources: ["Pod"] }],
  ["sidecar.mesh.io/rewriteAppHTTPProbers", { resources: ["Pod"] }],
  ["sidecar.mesh.io/controlPlaneAuthPolicy", { resources: ["Pod"], deprecated: true }],
  ["sidecar.mesh.io/discoveryAddress", { resources: ["Pod"], deprecated: true }],
  ["sidecar.mesh.io/proxyImage", { resources: ["Pod"] }],
  ["sidecar.mesh.io/proxyCPU", { resources: ["Pod"] }],
  ["sidecar.mesh.io/proxyCPULimit", { resources: ["Pod"] }],
  ["sidecar.mesh.io/proxyMemory", { resources: ["Pod"] }],
  ["sidecar.mesh.io/proxyMemoryLimit", { resources: ["Pod"] }],
  ["sidecar.mesh.io/interceptionMode", { resources: ["Pod"] }],
  ["sidecar.mesh.io/bootstrapOverride", { resources: ["Pod"] }],
  ["sidecar.mesh.io/statsInclusionPrefixes", { resources: ["Pod"], deprecated: true }],
  ["sidecar.mesh.io/statsInclusionSuffixes", { resources: ["Pod"], deprecated: true }],
  ["sidecar.mesh.io/statsInclusionRegexps", { resources: ["Pod"], deprecated: true }],
  ["sidecar.mesh.io/userVolume", { resources: ["Pod"] }],
  ["sidecar.mesh.io/userVolumeMount", { resources: ["Pod"] }],
  ["sidecar.mesh.io/enableCoreDump", { resources: ["Pod"] }],
  ["status.sidecar.mesh.io/port", { resources: ["Pod"] }],
  ["sidecar.mesh.io/logLevel", { resources: ["Pod"] }],
  ["sidecar.mesh.io/componentLogLevel", { resources: ["Pod"] }],
  ["readiness.status.sidecar.mesh.io/initialDelaySeconds", { resources: ["Pod"] }],
  ["readiness.status.sidecar.mesh.io/periodSeconds", { resources: ["Pod"] }],
  ["readiness.status.sidecar.mesh.io/failureThreshold", { resources: ["Pod"] }],
  ["readiness.status.sidecar.mesh.io/applicationPorts", { resources: ["Pod"] }],
  ["traffic.sidecar.mesh.io/includeOutboundIPRanges", { resources: ["Pod"] }],
  ["traffic.sidecar.mesh.io/excludeOutboundIPRanges", { resources: ["Pod"] }],
  ["traffic.sidecar.mesh.io/includeInboundPorts", { resources: ["Pod"] }],
  ["traffic.sidecar.mesh.io/excludeInboundPorts", { resources: ["Pod"] }],
  ["traffic.sidecar.mesh.io/includeOutboundPorts", { resources: ["Pod"] }],
  ["traffic.sidecar.mesh.io/excludeOutboundPorts", { resources: ["Pod"] }],
  ["traffic.sidecar.mesh.io/kubevirtInterfaces", { resources: ["Pod"] }],
  ["kubernetes.io/ingress.class", { resources: ["Ingress"] }],
  ["install.operator.mesh.io/chart-owner", { resources: ["Any"] }],
  ["install.operator.mesh.io/owner-generation", { resources: ["Any"] }],
  ["install.operator.mesh.io/version", { resources: ["Any"] }],
  ["galley.mesh.io/analyze-suppress", { resources: ["Any"] }],
  ["proxy.mesh.io/config", { resources: ["Pod"] }],
]);

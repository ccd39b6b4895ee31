import type { Analyzer } from "./analyzer.ts";
import { annotationsAnalyzer, type AnnotationValidator } from "./annotations_analyzer.ts";
import { authorizationPoliciesAnalyzer } from "./authorization_policies_analyzer.ts";
import { caCertificateAnalyzer } from "./ca_certificate_analyzer.ts";
import { conflictingMeshGatewayHostsAnalyzer } from "./conflicting_mesh_gateway_hosts.ts";
import { deprecationAnalyzer } from "./deprecation_analyzer.ts";
import { destinationHostAnalyzer } from "./destination_host_analyzer.ts";
import { destinationRuleSubsetAnalyzer } from "./destination_rule_subset_analyzer.ts";
import { gatewayReferenceAnalyzer } from "./gateway_reference_analyzer.ts";
import { gatewaySecretAnalyzer } from "./gateway_secret_analyzer.ts";
import { ingressGatewayPortAnalyzer } from "./ingress_gateway_port_analyzer.ts";
import { injectionAnalyzer } from "./injection_analyzer.ts";
import { injectionImageAnalyzer } from "./injection_image_analyzer.ts";
import { matchesAnalyzer } from "./matches_analyzer.ts";
import { meshNetworksAnalyzer } from "./mesh_networks_analyzer.ts";
import { multiServiceAnalyzer } from "./multi_service_analyzer.ts";
import { portNameAnalyzer } from "./port_name_analyzer.ts";
import { regexAnalyzer } from "./regex_analyzer.ts";
import { schemaValidationAnalyzers } from "./schema_validation_analyzer.ts";
import { serviceEntryAddressesAnalyzer } from "./service_entry_addresses_analyzer.ts";
import { sidecarDefaultSelectorAnalyzer } from "./sidecar_default_selector_analyzer.ts";
import { sidecarSelectorAnalyzer } from "./sidecar_selector_analyzer.ts";

/** What the analyzers need from outside analysis. */
export interface AnalyzerOptions {
  /** The injector's check of one annotation value (the annotations analyzer reports what it refuses). */
  readonly validateAnnotation?: AnnotationValidator;
}

/** The reference's twenty analyzers in the reference's order, then the schema analyzers of every mesh kind. */
export function allAnalyzers(options: AnalyzerOptions = {}): readonly Analyzer[] {
  return [
    annotationsAnalyzer(options.validateAnnotation),
    authorizationPoliciesAnalyzer,
    multiServiceAnalyzer,
    deprecationAnalyzer,
    ingressGatewayPortAnalyzer,
    gatewaySecretAnalyzer,
    injectionAnalyzer,
    injectionImageAnalyzer,
    meshNetworksAnalyzer,
    portNameAnalyzer,
    sidecarDefaultSelectorAnalyzer,
    sidecarSelectorAnalyzer,
    conflictingMeshGatewayHostsAnalyzer,
    destinationHostAnalyzer,
    destinationRuleSubsetAnalyzer,
    gatewayReferenceAnalyzer,
    regexAnalyzer,
    matchesAnalyzer,
    caCertificateAnalyzer,
    serviceEntryAddressesAnalyzer,
    ...schemaValidationAnalyzers(),
  ];
}

/** The analyzers that can run on an input: all with orchestrator objects, else those needing none. */
export function runnableAnalyzers(
  analyzers: readonly Analyzer[],
  withOrchestrator: boolean,
): readonly Analyzer[] {
  return withOrchestrator ? analyzers : analyzers.filter((a) => !a.requiresOrchestrator);
}

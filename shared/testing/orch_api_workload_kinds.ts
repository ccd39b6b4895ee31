/**
 * Test support: kinds the test API server (`orch_api_server.ts`) serves for configuration analysis beside the
 * registry's: Deployments and custom resource definitions, stored and watched like any object. Only tests
 * import this file.
 *
 * @module
 */
import type { ResourceType } from "./orch_api_admission.ts";

/** Deployments (`apps/v1`) and CustomResourceDefinitions (`apiextensions.k8s.io/v1`). */
export const WORKLOAD_TYPES: readonly ResourceType[] = Object.freeze([
  { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", namespaced: true },
  {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
  },
]);

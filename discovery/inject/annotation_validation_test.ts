import assert from "node:assert/strict";
import { InvalidAnnotationError, validateSidecarAnnotations } from "./annotation_validation.ts";

Deno.test("Traffic annotations take only CIDR blocks Go's ParseCIDR reads", () => {
  const annotation = "traffic.sidecar.mesh.io/includeOutboundIPRanges";
  validateSidecarAnnotations({ [annotation]: "10.0.0.0/8,fd00::/8" });
  for (const bad of [":::::/8", "10.0.0.0/33", "10.0.0/8", "10.0.0.0"]) {
    assert.throws(() => validateSidecarAnnotations({ [annotation]: bad }), InvalidAnnotationError, bad);
  }
});

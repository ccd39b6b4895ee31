/**
 * The config directory of the proxyless gRPC routing test: `greeter.example.svc.cluster.local:7070` (GRPC) as
 * a ServiceEntry over two WorkloadEntries on 127.0.0.1 (v1 and v2 on their own ports), a DestinationRule
 * with subsets v1 and v2 by label, and a VirtualService splitting traffic between them.
 *
 * @module
 */
import { join } from "node:path";

/** The service's FQDN. */
export const GREETER_HOST = "greeter.example.svc.cluster.local";

/** The service port clients dial. */
export const GREETER_PORT = 7070;

/** The ports the two backends listen on. */
export interface GreeterBackends {
  readonly v1: number;
  readonly v2: number;
}

/** The service, its workloads and the DestinationRule, as one YAML stream. */
export function greeterServiceYaml(backends: GreeterBackends): string {
  const workload = (version: string, port: number) => `
apiVersion: networking.mesh.io/v1beta1
kind: WorkloadEntry
metadata:
  name: greeter-${version}
  namespace: example
spec:
  address: 127.0.0.1
  labels:
    app: greeter
    version: ${version}
  locality: region1/zone1
  ports:
    grpc: ${port}
`;
  return `apiVersion: networking.mesh.io/v1beta1
kind: ServiceEntry
metadata:
  name: greeter
  namespace: example
spec:
  hosts:
    - ${GREETER_HOST}
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
    - number: ${GREETER_PORT}
      name: grpc
      protocol: GRPC
  workloadSelector:
    labels:
      app: greeter
---${workload("v1", backends.v1)}---${workload("v2", backends.v2)}---
apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata:
  name: greeter
  namespace: example
spec:
  host: greeter
  subsets:
    - name: v1
      labels:
        version: v1
    - name: v2
      labels:
        version: v2
`;
}

/** The VirtualService sending `v1` percent of calls to subset v1 and `v2` percent to subset v2. */
export function greeterSplitYaml(v1: number, v2: number): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: greeter
  namespace: example
spec:
  hosts:
    - greeter
  http:
    - route:
        - destination:
            host: greeter
            subset: v1
          weight: ${v1}
        - destination:
            host: greeter
            subset: v2
          weight: ${v2}
`;
}

/** Writes the service file and the split into `dir`. */
export async function writeGreeterConfig(dir: string, backends: GreeterBackends, v1: number, v2: number) {
  await Deno.writeTextFile(join(dir, "greeter-service.yaml"), greeterServiceYaml(backends));
  await writeGreeterSplit(dir, v1, v2);
}

/** Replaces the split on disk, atomically (a rename), so the watcher never reads half a file. */
export async function writeGreeterSplit(dir: string, v1: number, v2: number): Promise<void> {
  const temp = join(dir, ".greeter-routing.yaml.tmp");
  await Deno.writeTextFile(temp, greeterSplitYaml(v1, v2));
  await Deno.rename(temp, join(dir, "greeter-routing.yaml"));
}

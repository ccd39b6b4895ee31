/**
 * The parts of the orchestrator's objects the mesh reads, as the API serves them (JSON field names). Only
 * what is named here is read; everything else is ignored.
 *
 * @module
 */

/** Object metadata. */
export interface OrchMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string | Date;
}

/** A Service. */
export interface OrchService {
  readonly metadata: OrchMeta;
  readonly spec?: {
    readonly type?: string;
    readonly clusterIP?: string;
    readonly externalName?: string;
    readonly selector?: Readonly<Record<string, string>>;
    readonly externalIPs?: readonly string[];
    readonly ports?: readonly {
      readonly name?: string;
      readonly port: number;
      readonly protocol?: string;
      readonly appProtocol?: string;
      readonly targetPort?: number | string;
    }[];
  };
  readonly status?: {
    readonly loadBalancer?: {
      readonly ingress?: readonly { readonly ip?: string; readonly hostname?: string }[];
    };
  };
}

/** One address of an Endpoints subset. */
export interface OrchEndpointAddress {
  readonly ip: string;
  readonly nodeName?: string;
  readonly targetRef?: { readonly kind?: string; readonly name?: string; readonly namespace?: string };
}

/** An Endpoints object: the addresses behind a Service, ready and not. */
export interface OrchEndpoints {
  readonly metadata: OrchMeta;
  readonly subsets?: readonly {
    readonly addresses?: readonly OrchEndpointAddress[];
    readonly notReadyAddresses?: readonly OrchEndpointAddress[];
    readonly ports?: readonly { readonly name?: string; readonly port: number; readonly protocol?: string }[];
  }[];
}

/** An EndpointSlice (`discovery.k8s.io/v1`): part of a service's endpoints, named by its service label. */
export interface OrchEndpointSlice {
  readonly metadata: OrchMeta;
  readonly addressType?: string;
  readonly endpoints?: readonly {
    readonly addresses: readonly string[];
    /** Absent `ready` means ready, as the API defines it. */
    readonly conditions?: { readonly ready?: boolean };
    readonly targetRef?: OrchEndpointAddress["targetRef"];
    readonly nodeName?: string;
  }[];
  readonly ports?: readonly { readonly name?: string; readonly port?: number; readonly protocol?: string }[];
}

/** A Pod. */
export interface OrchPod {
  readonly metadata: OrchMeta;
  readonly spec?: { readonly serviceAccountName?: string; readonly nodeName?: string };
  readonly status?: {
    readonly podIP?: string;
    readonly phase?: string;
    readonly conditions?: readonly { readonly type: string; readonly status: string }[];
  };
}

/** A Namespace. */
export interface OrchNamespace {
  readonly metadata: OrchMeta;
}

/** A Node. */
export interface OrchNode {
  readonly metadata: OrchMeta;
}

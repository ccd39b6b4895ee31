import { childPath, type ValidationReport } from "../validation/report.ts";
import { checkFqdn } from "../validation/hosts.ts";
import { checkIpSubnet, isIp } from "../validation/ip.ts";
import { isDnsLabel } from "../validation/labels.ts";
import { checkedStr, type Decoder, list, mapOf, message, port, str } from "./decoders.ts";
import { decodeConfigFile } from "./config_file.ts";

/** Which endpoints belong to a network: those in a CIDR block, or those of a service registry. */
export interface NetworkEndpoints {
  /** The endpoints in this IP or CIDR range; excludes `fromRegistry`. */
  readonly fromCidr?: string;
  /** The endpoints of this service registry, by name (a DNS label); excludes `fromCidr`. */
  readonly fromRegistry?: string;
}

/** How other networks reach a network: a gateway service of the registry or an address, and a port. */
export interface NetworkGateway {
  /** Fully qualified name of the gateway service in the registry; excludes `address`. */
  readonly registryServiceName?: string;
  /** IP address or DNS name of the gateway; excludes `registryServiceName`. */
  readonly address?: string;
  /** Port of the gateway; required. */
  readonly port: number;
  /** Locality of the gateway, `region/zone/subzone`. */
  readonly locality?: string;
}

/** One network of the mesh. */
export interface Network {
  /** Which endpoints are on the network. */
  readonly endpoints: readonly NetworkEndpoints[];
  /** How other networks reach the network's endpoints. */
  readonly gateways: readonly NetworkGateway[];
}

/** The mesh's networks by name (Istio 1.9's `MeshNetworks`), from `--networksConfig`. */
export interface MeshNetworks {
  /** Networks by name; names are non-empty. */
  readonly networks: Readonly<Record<string, Network>>;
}

/** A parsed mesh networks file and its warnings. */
export interface ParsedMeshNetworks {
  /** The parsed networks. */
  readonly networks: MeshNetworks;
  /** Warnings found while parsing, each as `file:line: field.path: message`. */
  readonly warnings: readonly string[];
}

/** No networks: every endpoint is reachable directly (the default without a file). */
export function defaultMeshNetworks(): MeshNetworks {
  return { networks: {} };
}

const endpoints = message<NetworkEndpoints>({
  fromCidr: checkedStr(checkIpSubnet),
  fromRegistry: checkedStr((name) =>
    isDnsLabel(name)
      ? undefined
      : `invalid registry name "${name}"; expected a DNS label such as "Orchestrator"`
  ),
}, { oneofs: [["fromCidr", "fromRegistry"]], check: requireOne(["fromCidr", "fromRegistry"]) });

const gateway = message<NetworkGateway>({
  registryServiceName: checkedStr(checkFqdn),
  address: checkedStr((address) =>
    isIp(address) || checkFqdn(address) === undefined
      ? undefined
      : `"${address}" is not a valid IP address or DNS name`
  ),
  port,
  locality: str,
}, {
  oneofs: [["registryServiceName", "address"]],
  check: (report, path, gw) => {
    requireOne(["registryServiceName", "address"])(report, path, gw);
    if (gw.port === undefined) report.error(childPath(path, "port"), "port is required");
  },
});

const network = message<Network>({
  endpoints: list(endpoints),
  gateways: list(gateway as Decoder<NetworkGateway>),
});

const meshNetworksFields = message<MeshNetworks>({
  networks: mapOf((report, path, value) => {
    const n = network(report, path, value ?? {});
    return n && { endpoints: n.endpoints ?? [], gateways: n.gateways ?? [] };
  }),
});

function requireOne<T>(names: readonly (keyof T & string)[]) {
  return (report: ValidationReport, path: string, value: Partial<T>) => {
    if (names.every((name) => value[name] === undefined)) {
      report.error(path, `one of ${names.join(" or ")} is required`);
    }
  };
}

/**
 * Parses a mesh networks file (YAML, one document; empty means no networks). Throws {@link MeshConfigError}
 * listing every error as `file:line: field.path: message`.
 */
export function parseMeshNetworks(text: string, file: string): ParsedMeshNetworks {
  const { value, warnings } = decodeConfigFile(text, file, (report, raw) => {
    const fields = meshNetworksFields(report, "", raw) ?? {};
    for (const name of Object.keys(fields.networks ?? {})) {
      if (name === "") report.error("networks", "a network name must not be empty");
    }
    return { networks: fields.networks ?? {} };
  });
  return { networks: value, warnings };
}

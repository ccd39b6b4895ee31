/**
 * The real `mesh-agent proxy` with `--templateFile`: the bootstrap it writes is the rendered template, with the
 * agent's node and sockets, not the built-in one.
 */
import assert from "node:assert/strict";
import { startProgram } from "./helpers/programs.ts";

const TEMPLATE = new URL("./fixtures/bootstrap/istio_style_bootstrap.json.tmpl", import.meta.url).pathname;

Deno.test("mesh-agent proxy writes the bootstrap rendered from an Istio-style --templateFile", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent_template_e2e_" });
  const agent = startProgram("mesh-agent", ["proxy", "--templateFile", TEMPLATE, "--log_as_json"], {
    POD_NAME: "app-1",
    POD_NAMESPACE: "example",
    INSTANCE_IP: "10.9.9.9",
    // No CA root or token: the agent stops after the bootstrap, which is all this test reads.
    PROXY_CONFIG: JSON.stringify({
      binaryPath: "/bin/sh",
      configPath: `${dir}/proxy`,
      proxyAdminPort: 16000,
    }),
  });
  try {
    await agent.waitFor(/"msg":"bootstrap written"/);
    const bootstrap = JSON.parse(await Deno.readTextFile(`${dir}/proxy/envoy-rev0.json`));
    assert.equal(bootstrap.node.id, "sidecar~10.9.9.9~app-1.example~example.svc.cluster.local");
    assert.equal(bootstrap.admin.address.socket_address.port_value, 16000, "from .config.ProxyAdminPort");
    const paths = JSON.stringify(bootstrap.static_resources.clusters);
    assert.match(paths, new RegExp(`"${dir}/proxy/SDS"`), "the agent's SDS socket");
    assert.match(paths, new RegExp(`"${dir}/proxy/XDS"`), "ProxyConfig configPath's XDS socket");
    assert.deepEqual(bootstrap.layered_runtime.layers[0], { name: "flags", static_layer: {} });
  } finally {
    await agent.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MESH_BOOTSTRAP wins over --templateFile, and PROXY_XDS_VIA_AGENT=false sends the template's xDS to the discovery server", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent_template_e2e_" });
  await Deno.writeTextFile(
    `${dir}/bootstrap.json.tmpl`,
    `{
  "node": { "id": "{{ .nodeID }}", "cluster": "{{ .cluster }}" },
  "admin": { "address": { "socket_address": { "address": "127.0.0.1", "port_value": {{ .config.ProxyAdminPort }} } } },
  "static_resources": { "clusters": [{
    "name": "xds-grpc", "type": "STATIC", "connect_timeout": "1s",
    "load_assignment": { "cluster_name": "xds-grpc", "endpoints": [{ "lb_endpoints": [{ "endpoint": { "address":
      {{ if .proxy_via_agent }}{ "pipe": { "path": "{{ .xds_socket }}" } }{{ else }}{ "socket_address": {{ .pilot_grpc_address }} }{{ end }}
    } }] }] }
  }] }
}
`,
  );
  const agent = startProgram(
    "mesh-agent",
    ["proxy", "--templateFile", `${dir}/not-this-one.tmpl`, "--log_as_json"],
    {
      POD_NAME: "app-1",
      POD_NAMESPACE: "example",
      INSTANCE_IP: "10.9.9.9",
      MESH_BOOTSTRAP: `${dir}/bootstrap.json.tmpl`,
      PROXY_XDS_VIA_AGENT: "false",
      PROXY_CONFIG: JSON.stringify({
        binaryPath: "/bin/sh",
        configPath: `${dir}/proxy`,
        discoveryAddress: "10.1.2.3:15010",
      }),
    },
  );
  try {
    await agent.waitFor(/"msg":"bootstrap written"/);
    const bootstrap = JSON.parse(await Deno.readTextFile(`${dir}/proxy/envoy-rev0.json`));
    const address =
      bootstrap.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint
        .address;
    assert.deepEqual(address, { socket_address: { address: "10.1.2.3", port_value: 15010 } });
  } finally {
    await agent.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

import client from "prom-client";
import {
  bucketsFor,
  METRIC_LABELS,
  METRIC_SPECS,
  type MetricProgram,
  type MetricSpec,
} from "./metric_specs.ts";
import { notEmitted } from "./not_emitted_metrics.ts";

/** A counter, gauge or histogram of the registry. */
export type AnyMetric = client.Counter<string> | client.Gauge<string> | client.Histogram<string>;

/**
 * The live metrics of one program: every metric its reference names, registered once in a private
 * prom-client registry, with typed accessors that fail loudly on a name or type mix-up.
 */
export class Metrics {
  /** The prom-client registry holding this program's metrics, for exposition. */
  readonly registry: client.Registry = new client.Registry();
  readonly #metrics = new Map<string, AnyMetric>();
  readonly #beforeRender: (() => void)[] = [];

  /**
   * Registers every metric `program` exports and sets `mesh_build` from `build.tag`; the help of a metric the
   * program never moves says so.
   */
  constructor(readonly program: MetricProgram, build: { version: string; tag: string }) {
    for (const spec of METRIC_SPECS) {
      if (!spec.programs.includes(program)) continue;
      const mark = notEmitted(program, spec.name);
      const help = mark === undefined
        ? spec.help
        : `${spec.help} Not emitted: ${mark.reason} (issue: ${mark.issue}).`;
      this.#metrics.set(spec.name, create({ ...spec, help }, this.registry));
    }
    this.gauge("mesh_build").set({
      component: program === "discovery" ? "discovery" : "proxy",
      tag: build.tag,
    }, 1);
  }

  /** The counter for a Sum or Count metric. */
  counter(name: string): client.Counter<string> {
    return this.#get(name, client.Counter) as client.Counter<string>;
  }

  /** The gauge for a LastValue metric. */
  gauge(name: string): client.Gauge<string> {
    return this.#get(name, client.Gauge) as client.Gauge<string>;
  }

  /** The histogram for a Distribution metric. */
  histogram(name: string): client.Histogram<string> {
    return this.#get(name, client.Histogram) as client.Histogram<string>;
  }

  /** Runs `update` before every exposition: for figures read when scraped rather than moved by events. */
  beforeRender(update: () => void): void {
    this.#beforeRender.push(update);
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    for (const update of this.#beforeRender) update();
    return this.registry.metrics();
  }

  /** The content type of `render()`'s output. */
  get contentType(): string {
    return this.registry.contentType;
  }

  // deno-lint-ignore no-explicit-any
  #get(name: string, type: new (...args: any[]) => AnyMetric): AnyMetric {
    const metric = this.#metrics.get(name);
    if (!metric) throw new TypeError(`Metric "${name}" is not declared for ${this.program}`);
    if (!(metric instanceof type)) {
      throw new TypeError(`Metric "${name}" is not a ${type.name.toLowerCase()}`);
    }
    return metric;
  }
}

function create(spec: MetricSpec, registry: client.Registry): AnyMetric {
  const common = {
    name: spec.name,
    help: spec.help,
    labelNames: [...(METRIC_LABELS[spec.name] ?? [])],
    registers: [registry],
  };
  switch (spec.kind) {
    case "Sum":
    case "Count":
      return new client.Counter(common);
    case "LastValue":
      return new client.Gauge(common);
    case "Distribution":
      return new client.Histogram({ ...common, buckets: bucketsFor(spec) });
  }
}

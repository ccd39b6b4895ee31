/**
 * One analysis run: the analyzers over one input, cut into event-loop slices, then the reference's
 * post-processing: messages on resources that suppress their code are dropped, the rest sorted (level, code,
 * resource, text) and de-duplicated.
 * @module
 */
import { KINDS } from "@mesh/shared/config/kinds";
import { LoopSlices } from "@mesh/shared/time/loop_slices";
import { AnalysisContext, type Analyzer } from "./analyzer.ts";
import { type AnalysisInput, ORCH_KINDS } from "./analysis_input.ts";
import { type AnalysisMessage, type MessageLevel, originKey } from "./analysis_message.ts";

/** The annotation that silences codes on one resource: `IST0101,IST0102` or `*`. */
export const SUPPRESS_ANNOTATION = "galley.mesh.io/analyze-suppress";

const LEVEL_ORDER: Readonly<Record<MessageLevel, number>> = { Error: 0, Warning: 1, Info: 2 };

/** The suppression annotation of every resource that has one, by `Kind/namespace/name`. */
function suppressions(input: AnalysisInput): Map<string, string> {
  const out = new Map<string, string>();
  for (const { kind } of KINDS) {
    for (const r of input.mesh(kind)) {
      const value = r.meta.annotations?.[SUPPRESS_ANNOTATION];
      if (value !== undefined) out.set(`${kind}/${r.meta.namespace}/${r.meta.name}`, value);
    }
  }
  for (const kind of ORCH_KINDS) {
    for (const o of input.orchestrator?.list(kind) ?? []) {
      const value = o.metadata.annotations?.[SUPPRESS_ANNOTATION];
      if (value !== undefined) out.set(`${kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`, value);
    }
  }
  return out;
}

function suppressed(message: AnalysisMessage, rules: Map<string, string>): boolean {
  const rule = rules.get(originKey(message.origin));
  if (rule === undefined) return false;
  return rule.split(",").some((code) => code.trim() === "*" || code.trim() === message.code);
}

function compare(a: AnalysisMessage, b: AnalysisMessage): number {
  return LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level] ||
    a.code.localeCompare(b.code) ||
    originKey(a.origin).localeCompare(originKey(b.origin)) ||
    a.text.localeCompare(b.text);
}

/** Drops suppressed messages, sorts the rest and keeps one of each identical message. */
export function finishMessages(
  input: AnalysisInput,
  messages: readonly AnalysisMessage[],
): AnalysisMessage[] {
  const rules = messages.length > 0 ? suppressions(input) : new Map<string, string>();
  const sorted = messages.filter((m) => !suppressed(m, rules)).sort(compare);
  return sorted.filter((m, i) => i === 0 || compare(m, sorted[i - 1]) !== 0);
}

/** Runs `analyzers` over `input` synchronously, for tests and tools. */
export function analyzeNow(input: AnalysisInput, analyzers: readonly Analyzer[]): AnalysisMessage[] {
  const ctx = new AnalysisContext(input);
  for (const analyzer of analyzers) {
    for (const _ of analyzer.analyze(ctx)) { /* no pauses */ }
  }
  return finishMessages(input, ctx.messages());
}

/**
 * Runs `analyzers` over `input`, giving the event loop a turn whenever a slice of `slices` is used up, so a
 * large run never holds pushes back for longer than one slice.
 */
export async function analyzeSliced(
  input: AnalysisInput,
  analyzers: readonly Analyzer[],
  slices: LoopSlices = new LoopSlices(),
): Promise<AnalysisMessage[]> {
  const ctx = new AnalysisContext(input);
  for (const analyzer of analyzers) {
    for (const _ of analyzer.analyze(ctx)) await slices.pause();
    await slices.pause();
  }
  return finishMessages(input, ctx.messages());
}

/** Messages grouped by resource key (`Kind/namespace/name`), each list in the run's order. */
export function messagesByResource(messages: readonly AnalysisMessage[]): Map<string, AnalysisMessage[]> {
  const out = new Map<string, AnalysisMessage[]>();
  for (const m of messages) {
    const key = originKey(m.origin);
    const list = out.get(key) ?? [];
    list.push(m);
    out.set(key, list);
  }
  return out;
}

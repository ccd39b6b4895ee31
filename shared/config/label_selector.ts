/**
 * Orchestrator label selectors (`matchLabels` and `matchExpressions` with `In`, `NotIn`, `Exists`,
 * `DoesNotExist`), matched as the orchestrator matches them.
 * @module
 */

/** A label selector as orchestrator objects spell it. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }[];
}

/** Whether `selector` has neither labels nor expressions. */
export function selectorIsEmpty(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0;
}

/**
 * Whether `selector` selects `labels`, as the orchestrator decides: an empty selector selects everything, and
 * an expression with an unknown operator selects nothing.
 */
export function labelSelectorMatches(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v)) return false;
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case "In":
        return has && values.includes(labels[key]);
      case "NotIn":
        return !has || !values.includes(labels[key]);
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
      default:
        return false;
    }
  });
}

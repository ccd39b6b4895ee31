import { type Html, html } from "./html.ts";

/** One line of a chart. */
export interface ChartSeries {
  /** Shown in the legend and the text alternative. */
  readonly label: string;
  /** Values oldest first; `undefined` leaves a gap. */
  readonly values: readonly (number | undefined)[];
  /** CSS class of the line (colour comes from the stylesheet). */
  readonly className: string;
}

/** What {@link lineChart} draws. */
export interface LineChart {
  /** Accessible name of the chart. */
  readonly title: string;
  /** Unit of the values, shown with the scale, e.g. `ms`. */
  readonly unit: string;
  readonly series: readonly ChartSeries[];
  /** Text under the horizontal axis, e.g. `last 10 minutes`. */
  readonly span: string;
}

const WIDTH = 600;
const HEIGHT = 160;
const PAD = 4;

/**
 * An inline SVG line chart scaled to the largest value, with a text alternative (title and a summary of each
 * series' latest and largest value). Colours come from classes, so no inline style is needed.
 */
export function lineChart(chart: LineChart): Html {
  const max = Math.max(
    0,
    ...chart.series.flatMap((s) => s.values.filter((v): v is number => v !== undefined)),
  );
  const top = max === 0 ? 1 : max;
  const lines = chart.series.map((s) =>
    html`
      <path class="${s.className}" fill="none" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"
        d="${pathData(s.values, top)}"></path>
    `
  );
  const summary = chart.series.map((s) => {
    const known = s.values.filter((v): v is number => v !== undefined);
    return `${s.label}: latest ${format(known.at(-1))} ${chart.unit}, highest ${
      format(known.length === 0 ? undefined : Math.max(...known))
    } ${chart.unit}`;
  }).join("; ");
  return html`
    <figure class="chart">
      <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${chart.title}. ${summary}"
        preserveAspectRatio="none">
    <title>${chart.title}</title>
    <line class="axis" x1="0" y1="${HEIGHT - PAD}" x2="${WIDTH}" y2="${HEIGHT - PAD}" stroke-width="1"></line>
    ${lines}
      </svg>
      <figcaption>${chart.title} (scale 0–${format(max)} ${chart.unit}, ${chart.span}).
    <span class="legend">${chart.series.map((s) =>
      html`
        <span class="key ${s.className}">${s.label}</span>
      `
    )}</span></figcaption>
    </figure>
  `;
}

/** The `d` attribute of a polyline through `values`; gaps start a new segment, a lone point draws a dot. */
export function pathData(values: readonly (number | undefined)[], top: number): string {
  const step = values.length > 1 ? WIDTH / (values.length - 1) : WIDTH;
  const segments: string[][] = [];
  let current: string[] | undefined;
  values.forEach((v, i) => {
    if (v === undefined) {
      current = undefined;
      return;
    }
    const point = `${(i * step).toFixed(1)} ${(HEIGHT - PAD - (v / top) * (HEIGHT - 2 * PAD)).toFixed(1)}`;
    if (current === undefined) segments.push(current = []);
    current.push(point);
  });
  // A zero-length line with round caps shows as a dot.
  return segments.map((points) =>
    points.length === 1
      ? `M${points[0]} l0 0`
      : `M${points[0]} ${points.slice(1).map((p) => `L${p}`).join(" ")}`
  ).join(" ");
}

function format(value: number | undefined): string {
  if (value === undefined) return "none";
  return value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(1) : value.toPrecision(2);
}

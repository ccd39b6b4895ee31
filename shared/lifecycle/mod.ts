/**
 * Components with a lifetime, and the runner that starts, stops and asks them whether they are ready.
 *
 * @module
 */
export * from "./component.ts";
export * from "./lifecycle.ts";
export * from "./closing_component.ts";
export * from "./duty_gate.ts";

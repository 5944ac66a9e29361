/**
 * Colours of the TUI, switched off as a whole under NO_COLOR: components ask the
 * theme for a colour and get `undefined` when colour is off, so ink draws plain text.
 */
import { createContext, useContext } from "react";
import type { AgentView } from "./state.js";
import type { LineKind } from "./state.js";

/** Colour names ink understands, or undefined for the terminal's default. */
export type Color = string | undefined;

/** What components use to colour themselves. */
export interface Theme {
  enabled: boolean;
  color(name: string | undefined): Color;
}

/** A theme; `enabled: false` draws everything in the default colour. */
export function makeTheme(enabled: boolean): Theme {
  return { enabled, color: (name) => (enabled && name ? name : undefined) };
}

const ThemeContext = createContext<Theme>(makeTheme(true));

/** Provides the theme to the tree. */
export const ThemeProvider = ThemeContext.Provider;

/** The current theme. */
export function useTheme(): Theme {
  return useContext(ThemeContext);
}

/** Green live, cyan working, yellow in between, red broken, grey gone. */
export function statusColor(status: AgentView["status"]): string {
  switch (status) {
    case "idle":
      return "green";
    case "busy":
      return "cyan";
    case "starting":
    case "stopping":
    case "backoff":
    case "stalled":
      return "yellow";
    case "unresponsive":
    case "failed":
      return "red";
    default:
      return "gray";
  }
}

/** Colour of a transcript line (thinking, results and notices are dimmed instead). */
export function lineColor(kind: LineKind): string | undefined {
  switch (kind) {
    case "user":
      return "cyan";
    case "tool":
      return "magenta";
    case "error":
      return "red";
    default:
      return undefined;
  }
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** The spinner frame at `now` (moves with the store's tick). */
export function spinner(now: number): string {
  return SPINNER[Math.floor(now / 100) % SPINNER.length]!;
}

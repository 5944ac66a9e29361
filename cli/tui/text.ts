/**
 * Text helpers of the TUI: wrapping transcript lines to a width, collapsing long
 * tool results, and short numbers. Pure; widths count UTF-16 code units, which is
 * close enough for the mostly-ASCII text agents print.
 */
import type { TranscriptLine } from "./state.js";

/** One line as drawn: its kind (for colour) and text no wider than the width. */
export interface DrawnLine {
  kind: TranscriptLine["kind"];
  text: string;
}

/** Break `text` into pieces of at most `width` characters, at spaces when possible. */
export function wrapText(text: string, width: number): string[] {
  const w = Math.max(1, width);
  const out: string[] = [];
  for (const raw of text.replace(/\t/g, "  ").split("\n")) {
    let line = raw;
    while (line.length > w) {
      const space = line.lastIndexOf(" ", w);
      const cut = space > w / 2 ? space : w;
      out.push(line.slice(0, cut));
      line = line.slice(cut).replace(/^ /, "");
    }
    out.push(line);
  }
  return out;
}

/** A tool result as the transcript shows it: its first `keep` lines and how many were left out. */
function collapseResult(text: string, keep: number): string {
  const lines = text.split("\n");
  if (lines.length <= keep) return text;
  return [...lines.slice(0, keep), `… (+${lines.length - keep} lines)`].join("\n");
}

/**
 * Drawn pieces of each transcript line, per width and result collapse. A line object
 * never changes once made (the reducer replaces it), so each line is wrapped once per
 * width however many frames show it; the WeakMap lets go of lines the state dropped.
 */
const wrapped = new WeakMap<TranscriptLine, Map<number, string[]>>();

/** What a hidden thinking block shows (pi's label). */
const HIDDEN_THINKING = "Thinking...";

/** `line` wrapped to `width`, a tool result collapsed to `resultLines` lines, a thinking block hidden or not (cached). */
function linePieces(line: TranscriptLine, width: number, resultLines: number, hideThinking: boolean): string[] {
  if (hideThinking && line.kind === "thinking") return [HIDDEN_THINKING];
  const key = width * 1000 + resultLines;
  let byWidth = wrapped.get(line);
  const hit = byWidth?.get(key);
  if (hit) return hit;
  const text = line.kind === "result" || line.kind === "error" ? collapseResult(line.text, resultLines) : line.text;
  const indent = line.kind === "result" ? "  ⎿ " : "";
  const pieces = wrapText(indent + text.split("\n").join(`\n${" ".repeat(indent.length)}`), width);
  if (!byWidth) wrapped.set(line, (byWidth = new Map()));
  byWidth.set(key, pieces);
  return pieces;
}

/**
 * The last `height` drawn lines of a transcript (plus its open streamed line, and
 * `last` under it: the queued messages) at
 * `width`, skipping `fromBottom` lines (scrolling up). Tool results collapse to
 * `resultLines` lines; with `hideThinking` a thinking block is one line. Works backwards, so a long transcript costs only what shows,
 * and each line is wrapped only the first time it shows at a width.
 */
export function tailLines(
  lines: readonly TranscriptLine[],
  open: TranscriptLine | null,
  width: number,
  height: number,
  opts: { fromBottom?: number; resultLines?: number; last?: TranscriptLine | null; hideThinking?: boolean } = {},
): DrawnLine[] {
  const want = height + (opts.fromBottom ?? 0);
  const out: DrawnLine[] = [];
  const hide = opts.hideThinking ?? false;
  // A hidden thinking block is one line however many lines it had.
  let lastKind: TranscriptLine["kind"] | null = null;
  const take = (line: TranscriptLine) => {
    if (hide && line.kind === "thinking" && lastKind === "thinking") return;
    lastKind = line.kind;
    const pieces = linePieces(line, width, opts.resultLines ?? 1, hide);
    for (let i = pieces.length - 1; i >= 0 && out.length < want; i--) out.push({ kind: line.kind, text: pieces[i]! });
  };
  if (opts.last) take(opts.last);
  if (open && open.text !== "") take(open);
  for (let i = lines.length - 1; i >= 0 && out.length < want; i--) take(lines[i]!);
  out.reverse();
  const skip = Math.min(opts.fromBottom ?? 0, Math.max(0, out.length - height));
  return out.slice(Math.max(0, out.length - height - skip), out.length - skip);
}

/** `850ms`, `3.2s`, `2m05s`. */
export function formatElapsed(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/** `950`, `12.3k`, `1.2M` tokens. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Cut `s` to `width` characters with an ellipsis. */
export function truncate(s: string, width: number): string {
  if (width <= 0) return "";
  return s.length > width ? `${s.slice(0, Math.max(0, width - 1))}…` : s;
}

/**
 * The one definition of how an agent's pane looks: its border, its header lines and its
 * transcript lines, as rows of styled spans. Ink renders the spans (`SpanRows`, in
 * `Pane` and `ZoomView`, when the pane holds an input line or a dialog); `paneRows`
 * paints them to final terminal rows, each exactly `width` columns with its SGR colours,
 * for the screen (`PaintedPane`): one string per row instead of ink's per-cell
 * tokenizing. A look changes here, once, for both. Pure.
 */
import stringWidth from "string-width";
import { askLine, modelLabel, placeLabel, statusLabel, usageLabel } from "./agent-labels.js";
import { queuedLine, type AgentView, type LineKind } from "./state.js";
import { formatElapsed, tailLines, truncate, type DrawnLine } from "./text.js";
import { lineColor } from "./theme.js";

/** How a piece of text looks. */
export interface Style {
  color?: string;
  bold?: boolean;
  dim?: boolean;
}

/** A styled piece of a row. */
export type Span = readonly [text: string, style?: Style];

/** A pane's border: ink's border style, the characters the painter draws (the same), its colour. */
export interface PaneBorder {
  ink: "double" | "round";
  /** Top-left, horizontal, top-right, vertical, bottom-left, bottom-right. */
  chars: readonly [string, string, string, string, string, string];
  color: string;
}

/** The border of a pane: focus shows as a double border, visible without colour too. */
export function paneBorder(focused: boolean): PaneBorder {
  return focused
    ? { ink: "double", chars: ["╔", "═", "╗", "║", "╚", "╝"], color: "cyan" }
    : { ink: "round", chars: ["╭", "─", "╮", "│", "╰", "╯"], color: "gray" };
}

const FG: Record<string, number> = {
  red: 31,
  green: 32,
  yellow: 33,
  blue: 34,
  magenta: 35,
  cyan: 36,
  white: 37,
  gray: 90,
};
const RESET = "\x1b[0m";
const DIM_KINDS: ReadonlySet<LineKind> = new Set(["thinking", "result", "notice"]);
// Terminal controls in agent text (a tool printing escapes) would move the cursor: drop them.
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;

/** What a pane shows; the same inputs as `Pane`. */
export interface PaneRowsInput {
  agent: AgentView;
  width: number;
  height: number;
  focused: boolean;
  now: number;
  slotKey?: number;
  /** Colour on (off under NO_COLOR: no escape codes at all, focus still shows as a double border). */
  color: boolean;
}

/** The pane's rows, top to bottom: `height` strings of `width` columns each. */
export function paneRows({ agent, width, height, focused, now, slotKey, color }: PaneRowsInput): string[] {
  if (width < 2 || height < 2) return Array.from({ length: Math.max(0, height) }, () => " ".repeat(Math.max(0, width)));
  const paint = (spans: readonly Span[], w: number) => fitSpans(spans, w, color);
  const { chars, color: borderColor } = paneBorder(focused);
  const border: Style = { color: borderColor };
  const [tl, h, tr, v, bl, br] = chars;
  const inner = Math.max(0, width - 4);
  const content: string[] = headerSpans(agent, inner, now, slotKey).map((spans) => paint(spans, inner));
  const bodyHeight = Math.max(0, height - 2 - content.length);
  content.push(
    ...transcriptRows(
      tailLines(agent.lines, agent.open, Math.max(1, inner), bodyHeight, { last: queuedLine(agent) }),
      inner,
      color,
    ),
  );
  const blank = " ".repeat(inner);
  const side = styled(v, border, color);
  // A pane narrower than its padding shows only its border.
  const pad = width >= 4 ? " " : "";
  const filler = width >= 4 ? "" : " ".repeat(Math.max(0, width - 2));
  const rows = [styled(tl + h.repeat(width - 2) + tr, border, color)];
  for (let i = 0; i < height - 2; i++)
    rows.push(side + pad + (width >= 4 ? (content[i] ?? blank) : filler) + pad + side);
  rows.push(styled(bl + h.repeat(width - 2) + br, border, color));
  return rows;
}

/** Drawn transcript lines as rows of exactly `width` columns, each in its kind's style. */
export function transcriptRows(lines: readonly DrawnLine[], width: number, color: boolean): string[] {
  return lines.map((line) => fitSpans([[line.text, lineStyle(line.kind)]], width, color));
}

/** Drawn transcript lines as rows of one span each, in their kind's style. */
export function transcriptSpans(lines: readonly DrawnLine[]): Span[][] {
  return lines.map((line) => [[line.text, lineStyle(line.kind)]]);
}

// One style object per kind: ink's renderer groups neighbouring lines by it.
const LINE_STYLES = new Map<LineKind, Style>();

/** How a transcript line of `kind` looks: its colour, the user's bold, thinking, results and notices dim. */
function lineStyle(kind: LineKind): Style {
  let style = LINE_STYLES.get(kind);
  if (!style)
    LINE_STYLES.set(kind, (style = { color: lineColor(kind), bold: kind === "user", dim: DIM_KINDS.has(kind) }));
  return style;
}

/**
 * The header lines, `width` columns wide: slot key, name, status and tokens; model and
 * place; then the question the agent waits on, or its running tool and elapsed time.
 */
export function headerSpans(a: AgentView, width: number, now: number, slotKey?: number): Span[][] {
  const tokens = usageLabel(a);
  const left = `${slotKey !== undefined ? `${slotKey} ` : ""}${a.name}`;
  const status = statusLabel(a, now);
  const gap = Math.max(1, width - left.length - 2 - status.text.length - tokens.length);
  const rows: Span[][] = [
    [
      [truncate(left, Math.max(4, width - status.text.length - 3)), { bold: true }],
      ["  "],
      [status.text, { color: status.color }],
      [tokens ? " ".repeat(gap) : ""],
      [tokens, { dim: true }],
    ],
    [[truncate(`${modelLabel(a)} · ${placeLabel(a)}`, width), { dim: true }]],
  ];
  const tool = a.tools[a.tools.length - 1];
  const asks = askLine(a);
  if (asks) rows.push([[truncate(asks, width), { color: "yellow" }]]);
  else if (tool)
    rows.push([
      [`${truncate(`⏺ ${tool.name} ${tool.summary}`, Math.max(4, width - 8))} `, { color: "magenta" }],
      [formatElapsed(now - tool.startedAt), { color: "magenta", dim: true }],
    ]);
  return rows;
}

/** Widest name and status column of the list overview. */
const LIST_NAME_MAX = 24;
const LIST_STATUS_MAX = 26;

/**
 * The list overview's rows, one per agent, `width` columns wide: the focus mark, the
 * number key (1–9), name and status in columns, then what the agent asks, its running
 * tool, or the last line it wrote. A person scans the states down one column.
 */
export function listRows(agents: readonly AgentView[], width: number, now: number, focused: string | null): Span[][] {
  const labels = agents.map((a) => statusLabel(a, now));
  let nameWidth = 4;
  let statusWidth = 0;
  for (const a of agents) nameWidth = Math.max(nameWidth, columns(a.name));
  for (const l of labels) statusWidth = Math.max(statusWidth, columns(l.text));
  nameWidth = Math.min(LIST_NAME_MAX, nameWidth);
  statusWidth = Math.min(LIST_STATUS_MAX, statusWidth);
  const room = Math.max(1, width - 4 - nameWidth - 1 - statusWidth - 2);
  return agents.map((a, i): Span[] => {
    const on = a.name === focused;
    const status = labels[i]!;
    const tool = a.tools[a.tools.length - 1];
    const asks = askLine(a);
    const detail: Span = asks
      ? [asks, { color: "yellow" }]
      : tool
        ? [`⏺ ${tool.name} ${tool.summary} ${formatElapsed(now - tool.startedAt)}`, { color: "magenta" }]
        : [tailLines(a.lines, a.open, room, 1, { last: queuedLine(a) })[0]?.text ?? usageLabel(a), { dim: true }];
    return [
      [on ? "▶" : " ", { color: "cyan", bold: true }],
      [i < 9 ? ` ${i + 1} ` : "   ", { dim: true }],
      [padColumns(truncate(a.name, nameWidth), nameWidth), { bold: on }],
      [" "],
      [padColumns(truncate(status.text, statusWidth), statusWidth), { color: status.color }],
      ["  "],
      detail,
    ];
  });
}

/** `text` padded with spaces to `width` columns. */
function padColumns(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - columns(text)));
}

/**
 * The spans as exactly `width` terminal columns: cut with an ellipsis when longer (as
 * ink's `wrap="truncate"`), padded with spaces when shorter. A wide character (CJK,
 * emoji) counts two columns, so a row never spills into the next pane.
 */
export function fitSpans(spans: readonly Span[], width: number, color: boolean): string {
  const clean = spans.map(([text, style]): Span => [text.replace(CONTROLS, ""), style]);
  let total = 0;
  for (const [text] of clean) total += columns(text);
  let room = width;
  let out = "";
  const cut = total > width;
  for (let [text, style] of clean) {
    if (room <= 0) break;
    if (text === "") continue;
    const w = columns(text);
    if (cut && w >= room) {
      text = cutToColumns(text, room - 1);
      text += `${" ".repeat(Math.max(0, room - 1 - columns(text)))}…`;
    }
    room -= cut && w >= room ? room : w;
    out += styled(text, style, color);
  }
  return room > 0 ? out + " ".repeat(room) : out;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

// A pane repaints the same header pieces and transcript lines many times: measure each once.
const measured = new Map<string, number>();
const MEASURED_MAX = 10_000;

/** Terminal columns of `text` (no controls in it). */
export function columns(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let w = measured.get(text);
  if (w === undefined) {
    if (measured.size >= MEASURED_MAX) measured.clear();
    measured.set(text, (w = stringWidth(text)));
  }
  return w;
}

/** The longest start of `text` that fits `width` columns, cut between characters. */
function cutToColumns(text: string, width: number): string {
  if (width <= 0) return "";
  if (PRINTABLE_ASCII.test(text)) return text.slice(0, width);
  let out = "";
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = stringWidth(segment);
    if (used + w > width) break;
    out += segment;
    used += w;
  }
  return out;
}

/** `text` in `style`, reset after; plain when colour is off or nothing is styled. */
function styled(text: string, style: Style | undefined, color: boolean): string {
  if (!color || !style || text === "") return text;
  let open = "";
  const fg = style.color ? FG[style.color] : undefined;
  if (fg !== undefined) open += `\x1b[${fg}m`;
  if (style.bold) open += "\x1b[1m";
  if (style.dim) open += "\x1b[2m";
  return open === "" ? text : open + text + RESET;
}

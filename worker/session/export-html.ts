/**
 * `export_html`: one self-contained HTML file of a session (no scripts, no external
 * files; images inline as data URLs). It shows the current branch — messages,
 * thinking, tool calls and results, bash runs, summaries — and says how many entries
 * sit on other branches. Every text it shows is escaped; rendering is pure.
 */
import { writeFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { AgentMessage, ImageContent, TextContent } from "../../shared/schema/messages.js";
import { entryMessage } from "./context.js";
import type { SessionEntry, SessionHeader } from "../../shared/schema/session.js";

/** What the page is made from. */
export interface HtmlExportInput {
  header: SessionHeader;
  /** The current branch, root first. */
  path: readonly SessionEntry[];
  /** All entries of the file, to count the ones on other branches. */
  entryCount: number;
  name?: string;
  systemPrompt?: string;
}

/** Escape text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const SAFE_MIME = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function image(block: ImageContent): string {
  // Only well-formed raster images become data URLs: an SVG or a crafted mime type could carry script.
  if (!SAFE_MIME.test(block.mimeType) || !BASE64.test(block.data)) {
    return `<p class="note">[image of type ${escapeHtml(block.mimeType)} not shown]</p>`;
  }
  return `<img alt="image" src="data:${block.mimeType};base64,${block.data}">`;
}

function blocks(content: string | readonly (TextContent | ImageContent)[]): string {
  if (typeof content === "string") return `<pre>${escapeHtml(content)}</pre>`;
  return content.map((b) => (b.type === "text" ? `<pre>${escapeHtml(b.text)}</pre>` : image(b))).join("\n");
}

function section(kind: string, title: string, body: string): string {
  return `<section class="${kind}"><h2>${escapeHtml(title)}</h2>\n${body}\n</section>`;
}

function renderMessage(message: AgentMessage): string {
  switch (message.role) {
    case "user":
      return section("user", "User", blocks(message.content));
    case "assistant": {
      const parts = message.content.map((b) => {
        if (b.type === "text") return `<pre>${escapeHtml(b.text)}</pre>`;
        if (b.type === "thinking")
          return `<details class="thinking"><summary>Thinking</summary><pre>${escapeHtml(b.thinking)}</pre></details>`;
        return `<div class="tool-call"><h3>Tool call: ${escapeHtml(b.name)}</h3><pre>${escapeHtml(JSON.stringify(b.arguments, null, 2))}</pre></div>`;
      });
      if (message.errorMessage) parts.push(`<p class="error">${escapeHtml(message.errorMessage)}</p>`);
      return section("assistant", `Assistant (${message.provider}/${message.model})`, parts.join("\n"));
    }
    case "toolResult":
      return section(
        message.isError ? "tool-result error" : "tool-result",
        `Tool result: ${message.toolName}`,
        blocks(message.content),
      );
    case "bashExecution": {
      const status = message.cancelled ? "cancelled" : `exit code ${message.exitCode ?? "none"}`;
      return section(
        "bash",
        `User ran: ${message.command}`,
        `<pre>${escapeHtml(message.output)}</pre>\n<p class="note">${escapeHtml(status)}</p>`,
      );
    }
    case "compactionSummary":
      return section("summary", "Compaction summary", `<pre>${escapeHtml(message.summary)}</pre>`);
    case "branchSummary":
      return section("summary", "Branch summary", `<pre>${escapeHtml(message.summary)}</pre>`);
    case "custom":
      return section("custom", `Extension message: ${message.customType}`, blocks(message.content));
    case "system":
      // The prompt and tool loadout the model had from here on (pi 1.6 records them in the session).
      return `<details class="system"><summary>System prompt${message.toolsAdded || message.toolsRemoved ? " and tools" : ""}</summary><pre>${escapeHtml(systemText(message))}</pre></details>`;
  }
}

function systemText(message: Extract<AgentMessage, { role: "system" }>): string {
  const parts = [typeof message.content === "string" ? message.content : message.content.map((b) => b.text).join("\n")];
  for (const [name, text] of Object.entries(message.sections ?? {})) parts.push(text ?? `(section ${name} removed)`);
  const added = (message.toolsAdded ?? []).map((t) => t.name);
  const removed = (message.toolsRemoved ?? []).map((t) => t.name);
  if (added.length > 0) parts.push(`tools added: ${added.join(", ")}`);
  if (removed.length > 0) parts.push(`tools removed: ${removed.join(", ")}`);
  return parts.filter((p) => p.length > 0).join("\n\n");
}

const CSS = `body{font:14px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222;background:#fafafa}
section{border-left:4px solid #999;background:#fff;margin:1rem 0;padding:.5rem 1rem}
section.user{border-color:#2a6}section.assistant{border-color:#36c}section.tool-result{border-color:#888}
section.error,p.error{border-color:#c33;color:#a00}section.summary{border-color:#c90}section.bash{border-color:#555}
h1{font-size:1.4rem}h2{font-size:.9rem;margin:.2rem 0;color:#555}h3{font-size:.85rem;margin:.2rem 0}
pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;font:13px/1.4 ui-monospace,monospace}
img{max-width:100%}.note{color:#777;font-size:.85rem}`;

/** The whole HTML page. Pure. */
export function renderSessionHtml(input: HtmlExportInput): string {
  const title = input.name ?? `Session ${input.header.id}`;
  const body: string[] = [];
  for (const entry of input.path) {
    const message = entryMessage(entry);
    if (message && !(message.role === "custom" && !message.display)) body.push(renderMessage(message));
    else if (entry.type === "compaction")
      body.push(
        section(
          "summary",
          "Compaction summary",
          `<pre>${escapeHtml(String((entry as { summary?: unknown }).summary ?? ""))}</pre>`,
        ),
      );
  }
  const others = input.entryCount - input.path.length;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="note">Session ${escapeHtml(input.header.id)} · started ${escapeHtml(input.header.timestamp)} · ${escapeHtml(input.header.cwd)}${
    others > 0 ? ` · ${others} entries on other branches are not shown` : ""
  }</p>
${input.systemPrompt ? `<details><summary>System prompt</summary><pre>${escapeHtml(input.systemPrompt)}</pre></details>\n` : ""}${body.join("\n")}
</body>
</html>
`;
}

/**
 * Write the page for a session file to `outputPath` (relative to `cwd`), or by
 * default to `pi-session-<file name>.html` in `cwd`, as pi names it. Returns the path.
 */
export function exportSessionHtml(
  sessionFile: string,
  input: HtmlExportInput,
  cwd: string,
  outputPath?: string,
): string {
  const target = resolve(cwd, outputPath ?? `pi-session-${basename(sessionFile, ".jsonl")}.html`);
  writeFileSync(target, renderSessionHtml(input), "utf8");
  return target;
}

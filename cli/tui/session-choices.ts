/**
 * The sessions `/resume` and `pi -r` offer: the session files of this project's folder,
 * newest first, each labelled by its name or first prompt, its time and its size, as one
 * line of a picker. `describeSession` is the pure part.
 */
import { readFileSync, statSync } from "node:fs";
import { contentText } from "../commands/transcript.js";
import { listSessionFiles } from "../../worker/session/locate.js";
import { checkSessionEntry } from "../../shared/schema/session.js";

/** One session the picker offers. */
export interface SessionChoice {
  path: string;
  label: string;
}

/**
 * What a session file's text shows of it: its latest name, its first prompt, its message
 * count. Entries are read through their schemas (shared/schema/session.ts); a line that
 * does not match is skipped, as the session loader leaves it out of the conversation.
 */
export function describeSession(text: string): { name?: string; firstPrompt?: string; messages: number } {
  let name: string | undefined;
  let firstPrompt: string | undefined;
  let messages = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const checked = checkSessionEntry(value);
    if (!checked.ok) continue;
    const entry = checked.value;
    if (entry.type === "session_info") name = entry.name;
    if (entry.type === "message") {
      messages++;
      if (firstPrompt === undefined && entry.message.role === "user")
        firstPrompt = contentText(entry.message.content).replace(/\s+/g, " ").trim();
    }
  }
  return { ...(name ? { name } : {}), ...(firstPrompt ? { firstPrompt } : {}), messages };
}

/** The sessions in `dir` with a conversation, newest first; `current` is marked. */
export function sessionChoices(dir: string, current?: string, now = Date.now()): SessionChoice[] {
  const out: (SessionChoice & { mtime: number })[] = [];
  for (const path of listSessionFiles(dir)) {
    let text: string;
    let mtime: number;
    try {
      text = readFileSync(path, "utf8");
      mtime = statSync(path).mtimeMs;
    } catch {
      continue;
    }
    const d = describeSession(text);
    if (d.messages === 0) continue;
    const title = d.name ?? d.firstPrompt ?? "(no prompt)";
    const short = title.length > 60 ? `${title.slice(0, 59)}…` : title;
    const label = `${short} · ${ago(now - mtime)} · ${d.messages} msg${path === current ? " (current)" : ""}`;
    out.push({ path, label, mtime });
  }
  out.sort((a, b) => b.mtime - a.mtime);
  return out.map(({ path, label }) => ({ path, label }));
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86_400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86_400)}d ago`;
}

/**
 * `/export FILE.jsonl`: the current branch as a session file of its own, as pi 1.6's
 * `exportToJsonl` writes it: a new header (this session's id and working directory, the
 * time of the export) and the entries from the root to the leaf, each linked to the one
 * before it. Made from the store in memory, so a session whose file is not written yet
 * (no message so far) or kept in memory (`--no-session`) exports as well.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { newHeader, type SessionStore } from "./session-file.js";

/** The branch's JSONL text (see the module comment). */
export function branchJsonl(store: SessionStore, now = new Date()): string {
  const lines: object[] = [newHeader({ cwd: store.header.cwd, id: store.sessionId }, now)];
  let parentId: string | null = null;
  for (const entry of store.pathToLeaf()) {
    lines.push({ ...entry, parentId });
    parentId = entry.id;
  }
  return `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
}

/** Write the branch to `outputPath` (resolved against `cwd`; its folder made when missing); returns the path. */
export function exportSessionJsonl(store: SessionStore, outputPath: string, cwd: string): string {
  const path = resolve(cwd, outputPath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, branchJsonl(store));
  return path;
}

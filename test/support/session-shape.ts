/**
 * Session entries and model requests reduced to what pi 1.6.0 and ours must have alike,
 * for the oracle tests that compare sessions side by side: an entry's kind, parent and the
 * entries it names (as positions), and a request without the words that are our own.
 */
type Line = Record<string, any>;

/** The text of a message's content (a string, or the text blocks joined). */
export const contentText = (content: unknown): string =>
  typeof content === "string" ? content : (content as Line[]).map((c) => c.text ?? "").join("");

/**
 * An entry as both sides must write it: its kind (message role, stop reason and text; the
 * tools and section names a system message adds or removes), its parent and the entries it
 * names as positions in `entries`, and the summaries. Left aside: ids, times, usage and
 * durations; the sections' and tools' wording, which is our own (differential/deliberate.ts,
 * OWN_PROMPT and OWN_TOOL_SCHEMAS); an error reply's message, which quotes the HTTP error in
 * each side's words and never reaches the model (the retry omits it). `entries` starts with
 * the file's header when `header` (the default); `get_entries` lists none.
 */
export function entryShape(entries: Line[], header = true): Line[] {
  const at = new Map(entries.map((e, i) => [e.id, i]));
  const ref = (id: unknown) => (typeof id === "string" ? (at.get(id) ?? id) : id);
  return entries.slice(header ? 1 : 0).map((e) => {
    const out: Line = { type: e.type, parent: ref(e.parentId) };
    if (e.type === "message") {
      const m = e.message;
      out.role = m.role;
      if (m.role === "system") {
        // pi's `docs` section points at pi's own documentation, which this package does not ship.
        out.sections = Object.keys(m.sections ?? {}).filter((name) => name !== "docs");
        out.toolsAdded = (m.toolsAdded ?? []).map((t: Line) => t.name);
        out.toolsRemoved = (m.toolsRemoved ?? []).map((t: Line) => t.name);
      } else {
        out.text = contentText(m.content);
        out.stopReason = m.stopReason;
      }
    }
    if (e.type === "custom_message") Object.assign(out, { customType: e.customType, text: contentText(e.content) });
    if (e.type === "context_edit") Object.assign(out, { target: ref(e.targetId), replacement: e.replacement });
    if (e.type === "compaction")
      Object.assign(out, {
        summary: e.summary,
        firstKept: ref(e.firstKeptEntryId),
        checkpointTools: (e.systemMessage?.toolsAdded ?? []).map((t: Line) => t.name),
      });
    if (e.type === "branch_summary") Object.assign(out, { summary: e.summary, from: ref(e.fromId) });
    if (e.type === "model_change") Object.assign(out, { provider: e.provider, modelId: e.modelId });
    return out;
  });
}

/**
 * A model request as both sides must send it. Left aside on purpose: the system prompt's
 * text and the tools' descriptions and schemas (our own words, see entryShape), and the
 * output budget's field: ours sends `max_tokens` to an OpenAI-compatible server that is
 * not OpenAI's (local servers have taken it longest, providers/compat.ts), pi sends
 * `max_completion_tokens` and `store: false`.
 */
export function requestShape(body: Line): Line {
  const { max_tokens: _a, max_completion_tokens: _b, store: _c, ...rest } = body;
  return {
    ...rest,
    messages: (body.messages as Line[]).map((m, i) => (i === 0 && m.role === "system" ? { role: "system" } : m)),
    tools: (body.tools ?? []).map((t: Line) => t.function.name),
  };
}

/** A summary request (a compaction's, a branch's) whole, output budget aside: it is pi's to the byte. */
export function summaryRequestShape(body: Line): Line {
  const { max_tokens: _a, max_completion_tokens: _b, store: _c, ...rest } = body;
  return rest;
}

/** Summary requests go out without tools; the conversation's requests carry the active ones. */
export const isSummaryRequest = (body: Line): boolean => (body.tools ?? []).length === 0;

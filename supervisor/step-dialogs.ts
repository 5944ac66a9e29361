/**
 * The open dialogs of an agent's worker, as one transition of the agent table changes them:
 * opened by the worker's `extension_ui_request`, closed when answered through us, at their
 * own timeout, or when a ping's answer no longer lists them (dismissed through their signal).
 * While one is open no request times out; once none is, held requests get their whole
 * timeout again. Pure: changes the step's copy of the state and appends effects.
 */
import type { RpcStateSummary } from "../shared/schema/rpc.js";
import type { DialogClosedReason } from "../shared/schema/supervisor-events.js";
import type { StepWriter } from "./step-writer.js";

/**
 * How long a dialog's request may have taken to reach us. The worker starts its dialog
 * timer before it writes the request and we start ours once we read it, so the worker's
 * fires up to this much earlier: a ping's answer in between is its timeout, not a dismissal.
 */
const DIALOG_TRANSIT_MS = 1_000;

/** A dialog opened (`extension_ui_request` waiting for an answer); with a `timeout`, its own timer runs as the worker's does. */
export function openDialog(w: StepWriter, id: string, question: string, timeout: unknown): void {
  const s = w.s;
  s.dialogs = new Map(s.dialogs).set(id, question);
  // As the worker does: a dialog with a timeout resolves to its default when it passes.
  if (typeof timeout === "number" && timeout > 0) {
    w.timer(`dialog:${id}`, timeout, { kind: "dialog_timeout", gen: s.worker!.gen, id });
    s.dialogDeadlines = new Map(s.dialogDeadlines).set(id, w.now + timeout);
  }
}

/**
 * Close the dialogs of `asked` that a ping's answer no longer lists open: an extension
 * dismissed them through their AbortSignal, which pi tells no client. Only our worker's
 * `get_state` lists `openDialogs`; from another pi, such a dialog closes with the worker.
 */
export function closeDismissedDialogs(
  w: StepWriter,
  data: RpcStateSummary | undefined,
  asked: ReadonlySet<string>,
): void {
  const open = data?.openDialogs;
  if (!open || asked.size === 0) return;
  const s = w.s;
  for (const id of asked)
    if (!open.includes(id))
      closeDialog(
        w,
        id,
        w.now + DIALOG_TRANSIT_MS >= (s.dialogDeadlines.get(id) ?? Infinity) ? "timeout" : "dismissed",
      );
}

/**
 * A dialog closed (the stream is told, so clients drop it); once none is open, requests
 * held for them get their whole timeout again.
 */
export function closeDialog(w: StepWriter, id: string, reason: DialogClosedReason): void {
  const s = w.s;
  if (!s.dialogs.has(id)) return;
  const dialogs = new Map(s.dialogs);
  dialogs.delete(id);
  s.dialogs = dialogs;
  if (s.dialogDeadlines.has(id)) {
    const deadlines = new Map(s.dialogDeadlines);
    deadlines.delete(id);
    s.dialogDeadlines = deadlines;
  }
  w.cancel(`dialog:${id}`);
  w.report({ type: "dialog_closed", id, reason });
  // The wait for a person is not silence: a stall is counted from the answer on.
  s.lastEventAt = w.now;
  if (dialogs.size > 0) return;
  for (const [rid, p] of s.pending) {
    if (p.kind !== "call" || !p.held) continue;
    w.addPending(rid, { ...p, held: false });
    w.timer(`rpc:${rid}`, p.timeoutMs, { kind: "rpc_timeout", id: rid, type: p.type, timeoutMs: p.timeoutMs });
  }
}

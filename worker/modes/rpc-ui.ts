/**
 * Extension dialogs in RPC mode: each dialog is an `extension_ui_request` on stdout
 * and waits for the `extension_ui_response` with the same id (or its timeout);
 * `notify` and `setStatus` are fire-and-forget requests.
 */
import { randomUuid } from "../../shared/uuid.js";
import type { JsonlWriter } from "../../shared/jsonl.js";
import type { ExtensionUi } from "../extensions/hooks.js";
import type { DialogOptions } from "../extensions/types.js";

/** A client's answer to a dialog. */
export interface UiResponse {
  id: string;
  value?: string;
  confirmed?: boolean;
  cancelled?: boolean;
}

/** The RPC side of `ctx.ui`. */
export class RpcUiBridge implements ExtensionUi {
  private readonly pending = new Map<string, (response: UiResponse | null) => void>();
  private readonly openWaiters = new Set<() => void>();

  constructor(private readonly writer: JsonlWriter) {}

  /** Resolves when the next dialog opens; `cancel` stops waiting. */
  nextDialog(): { opened: Promise<void>; cancel: () => void } {
    let waiter!: () => void;
    const opened = new Promise<void>((resolve) => (waiter = resolve));
    this.openWaiters.add(waiter);
    return { opened, cancel: () => void this.openWaiters.delete(waiter) };
  }

  /** Deliver a client's response; unknown ids (late answers after a timeout) are ignored. */
  resolve(response: UiResponse): void {
    const waiter = this.pending.get(response.id);
    if (!waiter) return;
    this.pending.delete(response.id);
    waiter(response);
  }

  /**
   * Ids of the dialogs still waiting for an answer. One that was answered, timed out or
   * dismissed through its AbortSignal is not among them; pi tells the client nothing when
   * a signal dismisses a dialog, so `get_state` lists these for a client that counts them.
   */
  openDialogIds(): string[] {
    return [...this.pending.keys()];
  }

  /** Cancel every open dialog (shutdown). */
  cancelAll(): void {
    for (const [id, waiter] of this.pending) {
      this.pending.delete(id);
      waiter(null);
    }
  }

  private dialog(fields: Record<string, unknown>, timeout?: number, signal?: AbortSignal): Promise<UiResponse | null> {
    // As pi: a dialog whose signal already fired, or fires, resolves to its default.
    if (signal?.aborted) return Promise.resolve(null);
    const id = randomUuid();
    return new Promise((resolvePromise) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => this.resolve({ id, cancelled: true });
      this.pending.set(id, (response) => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolvePromise(response);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeout !== undefined && timeout > 0) {
        timer = setTimeout(() => this.resolve({ id, cancelled: true }), timeout);
      }
      void this.writer.write({ type: "extension_ui_request", id, ...fields, ...(timeout ? { timeout } : {}) });
      for (const opened of this.openWaiters) opened();
      this.openWaiters.clear();
    });
  }

  async select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined> {
    const r = await this.dialog({ method: "select", title, options }, opts?.timeout, opts?.signal);
    return r && !r.cancelled && r.value !== undefined && options.includes(r.value) ? r.value : undefined;
  }

  async confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean> {
    const r = await this.dialog(
      { method: "confirm", title, ...(message !== undefined ? { message } : {}) },
      opts?.timeout,
      opts?.signal,
    );
    return Boolean(r && !r.cancelled && r.confirmed);
  }

  async input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> {
    const r = await this.dialog(
      { method: "input", title, ...(placeholder !== undefined ? { placeholder } : {}) },
      opts?.timeout,
      opts?.signal,
    );
    return r && !r.cancelled ? r.value : undefined;
  }

  async editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined> {
    const r = await this.dialog(
      { method: "editor", title, ...(prefill !== undefined ? { prefill } : {}) },
      opts?.timeout,
      opts?.signal,
    );
    return r && !r.cancelled ? r.value : undefined;
  }

  /** As pi's RPC mode: a notice given without a type goes out without `notifyType`. */
  notify(message: string, type?: "info" | "warning" | "error"): void {
    void this.writer.write({
      type: "extension_ui_request",
      id: randomUuid(),
      method: "notify",
      message,
      ...(type !== undefined ? { notifyType: type } : {}),
    });
  }

  setWidget(key: string, lines: string[] | undefined, placement?: "aboveEditor" | "belowEditor"): void {
    this.fireAndForget({
      method: "setWidget",
      widgetKey: key,
      ...(lines !== undefined ? { widgetLines: lines } : {}),
      ...(placement ? { widgetPlacement: placement } : {}),
    });
  }

  setTitle(title: string): void {
    this.fireAndForget({ method: "setTitle", title });
  }

  setEditorText(text: string): void {
    this.fireAndForget({ method: "set_editor_text", text });
  }

  private fireAndForget(fields: Record<string, unknown>): void {
    void this.writer.write({ type: "extension_ui_request", id: randomUuid(), ...fields });
  }

  setStatus(key: string, text: string | undefined): void {
    void this.writer.write({
      type: "extension_ui_request",
      id: randomUuid(),
      method: "setStatus",
      statusKey: key,
      ...(text !== undefined ? { statusText: text } : {}),
    });
  }
}

/** `ctx.ui` where no one can answer (print mode): dialogs resolve to their defaults. */
export const DEFAULT_UI: ExtensionUi = {
  select: async () => undefined,
  confirm: async () => false,
  input: async () => undefined,
  editor: async (_title, prefill) => prefill,
  notify: (message, type = "info") => process.stderr.write(`pi: [${type}] ${message}\n`),
  setStatus: () => undefined,
};

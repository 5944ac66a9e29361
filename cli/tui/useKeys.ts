/**
 * Key handlers for the TUI. Ink's `useInput` subscribes in a passive effect, which runs
 * some time after the commit that drew the component: a key typed as soon as a form, a
 * dialog or the grid's own keys became active (a fast typist, a paste, a test) reached no
 * listener and was lost. And it hands a whole read to its handler as one input: `4p`
 * typed fast was one "key" that matched nothing, and two arrows in one read were handled
 * against the same render, so the second moved from where the first started.
 *
 * So every component takes its keys from the one `KeyRouter` the App mounts first: a
 * handler joins it in a layout effect, in the commit that draws it. The router splits
 * each read into keys (cli/tui/keys.ts) and hands them out one at a time, each after
 * React committed what the last one did: after `p` the prompt line is drawn and joined, and the `hello⏎` of the
 * same read goes to it. `useKeys` handlers get each key parsed (Alt apart from the plain key: a
 * leading ESC sets `meta`); `useRawKeys` handlers (the line editor) get the rest of the
 * read at once, escape sequences and bracketed-paste markers included, since a line
 * break followed by more text in one read is a paste, not Enter. The handler of the
 * latest render is the one called (no stale closures). Outside a router both refuse to
 * mount: no component can fall back to a listener of its own that joins late.
 */
import { useStdin, type Key } from "ink";
import { createContext, createElement, useContext, useLayoutEffect, useRef, type ReactNode } from "react";
import { parseKey, splitKeys, type TerminalReplies } from "./keys.js";
import type { TerminalHandover } from "./terminal-handover.js";

type Handler = (input: string, key: Key) => void;
type RawHandler = (raw: string) => void;
/** A joined handler, of either form; `current` is the latest render's. */
type Slot = { current: { keyed: Handler } | { raw: RawHandler } };

const RouterContext = createContext<Set<Slot> | null>(null);

/**
 * One input listener for everything below it; `useKeys` and `useRawKeys` below it join it
 * in the drawing commit. `replies` takes the terminal's answers to queries out first;
 * `handover` gets the raw-mode switch.
 */
export function KeyRouter({
  children,
  replies,
  handover,
}: {
  children?: ReactNode;
  replies?: TerminalReplies;
  /** Gets the raw-mode switch, to stop reading keys while another program has the terminal. */
  handover?: TerminalHandover;
}) {
  const slots = useRef(new Set<Slot>()).current;
  const { internal_eventEmitter: events, setRawMode } = useStdin();
  useLayoutEffect(() => {
    setRawMode(true);
    handover?.attach(setRawMode);
    return () => {
      handover?.attach(null);
      setRawMode(false);
    };
  }, [setRawMode, handover]);
  useLayoutEffect(() => {
    // Keys not handed out yet, in order, over reads: the first key of a read goes at once,
    // each next one a macrotask later, once React committed what the last one did.
    const queue: string[] = [];
    let next: NodeJS.Immediate | "pending" | null = null;
    const handOut = () => {
      const active = [...slots];
      // A line editor takes the rest at once; the others get it key by key.
      const taken = active.some((slot) => "raw" in slot.current) ? queue.splice(0) : queue.splice(0, 1);
      for (const slot of active) {
        if (!slots.has(slot)) continue; // left while an earlier handler ran
        const h = slot.current;
        if ("raw" in h) h.raw(taken.join(""));
        else
          for (const k of taken) {
            const { input, key } = parseKey(k);
            h.keyed(input, key);
          }
      }
      // React schedules its render from a microtask (a task of its scheduler, a setImmediate):
      // queued from a microtask after it, the next key (of this read, or of a read ink
      // emits meanwhile: it splits escape sequences into reads of their own) comes once
      // that render committed.
      next = "pending";
      queueMicrotask(() => {
        if (next === "pending") next = setImmediate(settle);
      });
    };
    const settle = () => {
      next = null;
      if (queue.length > 0) handOut();
    };
    const onInput = (read: string) => {
      const text = replies ? replies.filter(read) : read;
      if (text === "") return;
      queue.push(...splitKeys(text, true));
      if (next === null && queue.length > 0) handOut();
    };
    events.on("input", onInput);
    return () => {
      events.removeListener("input", onInput);
      if (next !== null && next !== "pending") clearImmediate(next);
      next = null;
      queue.length = 0;
    };
  }, [events, slots, replies]);
  return createElement(RouterContext.Provider, { value: slots }, children);
}

/** Join the router above while active, from the commit that draws the caller. */
function useSlot(hook: string, handler: Slot["current"], isActive: boolean): void {
  const router = useContext(RouterContext);
  if (router === null)
    throw new Error(
      `${hook} needs a KeyRouter above it (the App mounts one): with a listener of its own, a key typed as the component shows is lost`,
    );
  const slot = useRef<Slot>({ current: handler }).current;
  slot.current = handler;
  useLayoutEffect(() => {
    if (!isActive) return;
    router.add(slot);
    return () => void router.delete(slot);
  }, [router, isActive, slot]);
}

/** Like ink's `useInput`, without stale closures, listening from the commit that draws it. */
export function useKeys(handler: Handler, opts: { isActive?: boolean } = {}): void {
  useSlot("useKeys", { keyed: handler }, opts.isActive ?? true);
}

/** The text of each key event as ink read it (escape sequences and paste markers included), from the commit that draws the caller. */
export function useRawKeys(handler: RawHandler, opts: { isActive?: boolean } = {}): void {
  useSlot("useRawKeys", { raw: handler }, opts.isActive ?? true);
}

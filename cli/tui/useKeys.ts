/**
 * Key handlers for the TUI. Ink's `useInput` subscribes in a passive effect, which runs
 * some time after the commit that drew the component: a key typed as soon as a form, a
 * dialog or the grid's own keys became active (a fast typist, a paste, a test) reached no
 * listener and was lost. So every component takes its keys from the one `KeyRouter` the
 * App mounts first: a handler joins it in a layout effect, in the commit that draws it,
 * and the router's single ink listener hands every key to the handlers that are active,
 * in the order they joined, in one batch of React updates (so a key that closes the input
 * line has closed it before the next key of the same read is handed out). `useKeys`
 * handlers get ink's parsed key; `useRawKeys` handlers (the line editor) get the text as
 * ink read it, escape sequences and bracketed-paste markers included. The handler of the latest render is the
 * one called (no stale closures). Outside a router both refuse to mount: no component can
 * fall back to a listener of its own that joins late.
 */
import { useInput, useStdin, type Key } from "ink";
import { createContext, createElement, useContext, useLayoutEffect, useRef, type ReactNode } from "react";

type Handler = (input: string, key: Key) => void;
type RawHandler = (raw: string) => void;
/** A joined handler, of either form; `current` is the latest render's. */
type Slot = { current: { keyed: Handler } | { raw: RawHandler } };

const RouterContext = createContext<Set<Slot> | null>(null);

/** One ink input listener for everything below it; `useKeys` and `useRawKeys` below it join it in the drawing commit. */
export function KeyRouter({ children }: { children?: ReactNode }) {
  const slots = useRef(new Set<Slot>()).current;
  const raw = useRef("");
  const { internal_eventEmitter: events } = useStdin();
  // ink parses what it read and passes on the parse only: the text itself is taken here,
  // ahead of every other listener of the same read (so ahead of ink's own below).
  useLayoutEffect(() => {
    const take = (text: string) => void (raw.current = text);
    events.prependListener("input", take);
    return () => void events.removeListener("input", take);
  }, [events]);
  useInput((input, key) => {
    for (const slot of [...slots]) {
      if (!slots.has(slot)) continue; // left while an earlier handler ran
      const h = slot.current;
      if ("keyed" in h) h.keyed(input, key);
      else h.raw(raw.current);
    }
  });
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

/**
 * Key handlers for the TUI. Ink's `useInput` subscribes in a passive effect, which runs
 * some time after the commit that drew the component: a key typed as soon as a form or a
 * dialog shows (a fast typist, a paste, a test) reached no listener and was lost. Inside a
 * `KeyRouter` a handler joins in a layout effect instead, in the commit that draws it; the
 * router's single `useInput` is mounted with the screen and hands every key to the handlers
 * that are active, in the order they joined. Outside a router, `useKeys` is `useInput`.
 * Either way the handler of the latest render is the one called (no stale closures).
 */
import { useInput, type Key } from "ink";
import { createContext, createElement, useContext, useLayoutEffect, useRef, type ReactNode } from "react";

type Handler = (input: string, key: Key) => void;
type Slot = { current: Handler };

const RouterContext = createContext<Set<Slot> | null>(null);

/** One ink input listener for everything below it; `useKeys` below it joins it in the drawing commit. */
export function KeyRouter({ children }: { children?: ReactNode }) {
  const slots = useRef(new Set<Slot>()).current;
  useInput((input, key) => {
    for (const slot of [...slots]) if (slots.has(slot)) slot.current(input, key);
  });
  return createElement(RouterContext.Provider, { value: slots }, children);
}

/** Like ink's `useInput`, without stale closures, and listening from the commit that draws it inside a KeyRouter. */
export function useKeys(handler: Handler, opts: { isActive?: boolean } = {}): void {
  const isActive = opts.isActive ?? true;
  const router = useContext(RouterContext);
  const latest = useRef(handler);
  latest.current = handler;
  useLayoutEffect(() => {
    if (router === null || !isActive) return;
    router.add(latest);
    return () => void router.delete(latest);
  }, [router, isActive]);
  // Outside a router: ink's own listener (one stable function, so ink does not resubscribe every render).
  const stable = useRef<Handler>((input, key) => latest.current(input, key)).current;
  useInput(stable, { isActive: isActive && router === null });
}

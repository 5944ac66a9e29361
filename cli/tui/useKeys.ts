/**
 * `useInput` that always calls the handler of the latest render. Ink re-subscribes a
 * new handler in an effect, which can run after the next keystroke arrived; a fast
 * typist (or a paste, or a test) would otherwise hit a handler with stale state.
 */
import { useInput, type Key } from "ink";
import { useRef } from "react";

/** Like ink's `useInput`, without stale closures. */
export function useKeys(handler: (input: string, key: Key) => void, opts: { isActive?: boolean } = {}): void {
  const latest = useRef(handler);
  latest.current = handler;
  useInput((input, key) => latest.current(input, key), opts);
}

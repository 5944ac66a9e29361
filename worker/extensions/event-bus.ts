/**
 * `pi.events`: one bus shared by every extension of a worker, so extensions can
 * talk to each other. A throwing listener is reported and the others still run.
 */

/** The bus extensions see. */
export interface EventBus {
  on(channel: string, listener: (data: unknown) => void): () => void;
  off(channel: string, listener: (data: unknown) => void): void;
  emit(channel: string, data?: unknown): void;
}

/** A bus; `onError` receives listener failures. */
export function createEventBus(onError: (channel: string, error: unknown) => void): EventBus {
  const listeners = new Map<string, Set<(data: unknown) => void>>();
  const bus: EventBus = {
    on(channel, listener) {
      let set = listeners.get(channel);
      if (!set) listeners.set(channel, (set = new Set()));
      set.add(listener);
      return () => bus.off(channel, listener);
    },
    off(channel, listener) {
      listeners.get(channel)?.delete(listener);
    },
    emit(channel, data) {
      for (const listener of [...(listeners.get(channel) ?? [])]) {
        try {
          const result = listener(data) as unknown;
          if (result instanceof Promise) result.catch((err: unknown) => onError(channel, err));
        } catch (err) {
          onError(channel, err);
        }
      }
    },
  };
  return bus;
}

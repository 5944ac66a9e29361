/**
 * jiti 2.7's `jitiInteropDefault` with `interopDefault: true` (its default, and ours), the
 * value an extension's `import` of a module gets: the module itself for a primitive or a
 * promise without a default, else a Proxy answering `default` and `__esModule` as jiti
 * does. A copy of jiti's own function (MIT, unjs/jiti src/utils.ts), so that a module
 * loaded from our cache (cached-import.ts) gets the very same value without loading jiti.
 */
export function jitiInteropDefault(mod: unknown): unknown {
  const modType = typeof mod;
  if (mod === null || (modType !== "object" && modType !== "function")) return mod;
  const m = mod as Record<PropertyKey, unknown>;
  const def = m.default;
  const defType = typeof def;
  const defIsNil = def === null || def === undefined;
  const defIsObj = defType === "object" || defType === "function";
  if (defIsNil && mod instanceof Promise) return mod;
  const isCallable = defType === "function" && modType !== "function";
  const mergeDefault = defIsObj && !(def instanceof Promise);
  const seen = new Map<PropertyKey, unknown>();
  return new Proxy(m, {
    get(target, prop) {
      if (seen.has(prop)) return seen.get(prop);
      let value: unknown;
      if (prop === "__esModule") value = true;
      else if (prop === "default") {
        const inner = def as Record<PropertyKey, unknown> | null | undefined;
        value = defIsNil ? mod : typeof inner?.default === "function" && m.__esModule ? inner?.default : def;
      } else if (prop in target) value = target[prop];
      else if (mergeDefault) {
        value = (def as Record<PropertyKey, unknown>)[prop];
        if (typeof value === "function") value = value.bind(def);
      }
      seen.set(prop, value);
      return value;
    },
    apply: isCallable
      ? (_target, thisArg, args) => Reflect.apply(def as (...a: unknown[]) => unknown, thisArg, args)
      : undefined,
  });
}

/**
 * Node's own dynamic `import()`, which a module cached by the extension module cache needs
 * for node's built-ins exactly as jiti gives them (their ESM namespace, through jiti's
 * interop). The CommonJS worker bundle cannot hold an `import()` (V8 drops the callback of a
 * script loaded from a code cache), so the build swaps this file there for one that loads
 * dist/cli/native-import.cjs, a file node compiles itself (scripts/build.mjs).
 */
export function nativeImport(id: string): Promise<unknown> {
  return import(id);
}

/**
 * pi 1.6's `defaultTools` setting: the tools active at start when `--tools` names none.
 * Plain names replace the defaults (read, bash, edit, write); `+name` adds one and `-name`
 * removes one, in order. The project's list is joined to the user's when it has only
 * `+`/`-` entries, and replaces it otherwise. Pure.
 */
/** Names active when nothing is said. */
export const DEFAULT_ACTIVE_TOOLS = ["read", "bash", "edit", "write"];

const isModifier = (entry: string) => entry.startsWith("+") || entry.startsWith("-");

/** The `defaultTools` of a project settings file over the user's, as pi merges settings layers. */
export function mergeDefaultTools(
  user: readonly string[] | undefined,
  project: readonly string[] | undefined,
): string[] | undefined {
  if (project === undefined) return user && [...user];
  if (user === undefined || !project.every(isModifier)) return [...project];
  return [...user, ...project];
}

/** The tool names a merged `defaultTools` list makes active at start. */
export function resolveDefaultTools(entries: readonly string[]): string[] {
  const plain = entries.filter((e) => !isModifier(e));
  const tools = plain.length > 0 || entries.length === 0 ? [...plain] : [...DEFAULT_ACTIVE_TOOLS];
  for (const entry of entries) {
    if (!isModifier(entry)) continue;
    const name = entry.slice(1);
    const at = tools.indexOf(name);
    if (entry.startsWith("+") && at === -1 && name) tools.push(name);
    else if (entry.startsWith("-") && at !== -1) tools.splice(at, 1);
  }
  return tools;
}

/**
 * How a hint names a `pi-orch` command: with the `--home` the user gave, so following it
 * reaches the same supervisor, not the default home's. A home from `PI_ORCH_HOME` needs
 * nothing: the shell that reads the hint has it too.
 */

/** `pi-orch ARGS`, or `pi-orch --home HOME ARGS` when `homeFlag` (the `--home` given) is set. */
export function piOrchCommand(args: string, homeFlag?: string): string {
  return homeFlag === undefined ? `pi-orch ${args}` : `pi-orch --home ${shellWord(homeFlag)} ${args}`;
}

/** `word` as one shell word: as it is when that is safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The first words of argv that are pi's package commands rather than a prompt. */

/** Whether argv's first word is a package command (`pi install`, `remove`, `uninstall`, `update`, `list`). */
export function isPackageCommand(word: string | undefined): boolean {
  return word === "install" || word === "remove" || word === "uninstall" || word === "update" || word === "list";
}

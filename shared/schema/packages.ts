/**
 * pi packages in settings and in `pi list --json`: an entry of the `packages` setting is a
 * source string, or an object with the source and filters that narrow which of the
 * package's resources load (pi 1.6.0's docs/packages.md, docs/settings.md).
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";

const Patterns = Type.Optional(Type.Array(Type.String()));

/** One `packages` entry: `"npm:x"`, or `{source, extensions?, skills?, prompts?, themes?, autoload?}`. */
export const PackageEntry = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({
    source: Type.String({ minLength: 1 }),
    extensions: Patterns,
    skills: Patterns,
    prompts: Patterns,
    themes: Patterns,
    /** `false` on a project entry: a filter delta over the user's entry for the same package. */
    autoload: Type.Optional(Type.Boolean()),
  }),
]);
export type PackageEntry = Static<typeof PackageEntry>;

/** One row of `pi list --json`: what pi's `listConfiguredPackages` reports. */
export const PackageListing = Type.Object({
  source: Type.String(),
  scope: Type.Union([Type.Literal("user"), Type.Literal("project")]),
  /** The settings entry is an object (it has filters). */
  filtered: Type.Boolean(),
  /** Where it is on disk; absent when it is not installed (or the path is gone). */
  installedPath: Type.Optional(Type.String()),
});
export type PackageListing = Static<typeof PackageListing>;

/**
 * pi 1.6.0's `<agent dir>/keybindings.json`: action ids mapped to one key or a list of
 * keys (`"app.session.new": "ctrl+shift+n"`, `"app.tools.expand": []`), keys written
 * `modifier+key` with `ctrl`, `shift`, `alt`, `super`.
 */
import type { Static } from "typebox";
import * as Type from "typebox/type";

const MODIFIER = "(?:ctrl|shift|alt|super)";
const BASE =
  "(?:[a-z0-9]|escape|esc|enter|return|tab|space|backspace|delete|insert|clear|home|end|pageUp|pageDown|up|down|left|right|f[1-9]|f1[0-2]|[`\\-=\\[\\]\\\\;',./!@#$%^&*()_+|~{}:<>?])";

/** One key as pi's key-id schema writes it (`ctrl+shift+x`, `alt+enter`, `pageUp`). */
export const KeyId = Type.String({ pattern: `^(?:${MODIFIER}\\+){0,4}${BASE}$` });

/** One action's value: a key, or a list of keys (empty: the action has no key). */
export const KeybindingValue = Type.Union([KeyId, Type.Array(KeyId)]);
/** One action's value, checked. */
export type KeybindingValue = Static<typeof KeybindingValue>;

/**
 * `@earendil-works/pi-tui` (and `@mariozechner/pi-tui`) for extensions in a worker without pi's terminal: the
 * components extensions construct load and render nothing, the text helpers work.
 * In pi's RPC mode `ctx.ui.custom()` returns undefined, so these are only built,
 * never shown.
 */

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

/** Columns `text` takes on a terminal (escape sequences take none; each code point one). */
export function visibleWidth(text: string): number {
  return [...text.replace(ANSI, "")].length;
}

/** `text` cut to `width` columns, ending in `ellipsis` when cut. */
export function truncateToWidth(text: string, width: number, ellipsis = "…"): string {
  const plain = [...text.replace(ANSI, "")];
  if (plain.length <= width) return text;
  const keep = Math.max(0, width - [...ellipsis].length);
  return plain.slice(0, keep).join("") + ellipsis;
}

/** pi-tui's `renderFakeCursor`: `text` between the markers pi's terminal draws a cursor for. */
export function renderFakeCursor(text: string): string {
  return `\x1b_pi:fc\x07${text}\x1b_pi:/fc\x07`;
}

/** Items whose text contains every character of `query` in order (case-insensitive). */
export function fuzzyFilter<T>(items: T[], query: string, getText: (item: T) => string = String): T[] {
  const q = query.toLowerCase();
  return items.filter((item) => {
    const text = getText(item).toLowerCase();
    let i = 0;
    for (const ch of text) if (ch === q[i]) i++;
    return i === q.length;
  });
}

/** A component that renders nothing: there is no terminal. */
class Headless {
  children: unknown[] = [];
  render(_width: number): string[] {
    return [];
  }
  invalidate(): void {}
  handleInput(_data: string): void {}
  addChild(child: unknown): void {
    this.children.push(child);
  }
  removeChild(child: unknown): void {
    this.children = this.children.filter((c) => c !== child);
  }
  clear(): void {
    this.children = [];
  }
  setText(_text: string): void {}
  getText(): string {
    return "";
  }
}

/** `Key.escape`, `Key.ctrl("p")`, `Key.ctrlAlt("p")`: key ids as strings (nothing reads them headless). */
function keyNames(): Record<string, unknown> {
  return new Proxy(
    {},
    {
      get: (_target, name) => {
        if (typeof name !== "string") return undefined;
        const id = (...keys: string[]) => [name, ...keys].join("+");
        return Object.assign(id, { toString: () => name, valueOf: () => name });
      },
    },
  );
}

/** The module object extensions import. */
export function piTuiModule(): Record<string, unknown> {
  const component = (name: string) => ({ [name]: class extends Headless {} })[name];
  return {
    visibleWidth,
    truncateToWidth,
    fuzzyFilter,
    renderFakeCursor,
    stripTerminalSequences: (text: string) => text.replace(ANSI, ""),
    isKeyRepeat: () => false,
    wrapTextWithAnsi: (text: string) => text.split("\n"),
    matchesKey: () => false,
    isKeyRelease: () => false,
    parseKey: () => undefined,
    Key: keyNames(),
    CURSOR_MARKER: "\x1b_pi:c\x07",
    Box: component("Box"),
    Container: component("Container"),
    Text: component("Text"),
    TruncatedText: component("TruncatedText"),
    Spacer: component("Spacer"),
    Markdown: component("Markdown"),
    SelectList: component("SelectList"),
    SettingsList: component("SettingsList"),
    Editor: component("Editor"),
    Input: component("Input"),
    Loader: component("Loader"),
    Image: component("Image"),
  };
}

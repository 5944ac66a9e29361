/**
 * useKeys and useRawKeys inside a KeyRouter listen from the commit that draws the
 * component: a key that arrives right after a form shows, before React runs passive
 * effects, reaches the form. With ink's own useInput that key is lost, which is what made
 * key tests (and fast typists) drop the first keys of a form under load; outside a router
 * the hooks refuse to mount rather than fall back to it.
 */
import { Text, useInput, useStdin } from "ink";
import { render } from "ink-testing-library";
import { Component, useLayoutEffect, useState, type ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KeyRouter, useKeys, useRawKeys } from "../../../cli/tui/useKeys.js";

type Listen = "keys" | "raw" | "ink";

/** Draws the message of an error its children throw while rendering. */
class ShowError extends Component<{ children: ReactNode }, { message: string | null }> {
  override state = { message: null as string | null };
  static getDerivedStateFromError(error: Error) {
    return { message: error.message };
  }
  override render() {
    return this.state.message === null ? this.props.children : <Text>{this.state.message}</Text>;
  }
}

/** A form that records what it is handed: parsed keys (`useKeys`), the raw text (`useRawKeys`), or through ink's own `useInput`. */
function Form({ got, listen }: { got: string[]; listen: Listen }) {
  useKeys((input, key) => void got.push(key.leftArrow ? "<left>" : input), { isActive: listen === "keys" });
  useRawKeys((raw) => void got.push(JSON.stringify(raw)), { isActive: listen === "raw" });
  useInput((input) => void got.push(input), { isActive: listen === "ink" });
  return <Text>form</Text>;
}

/** Opens the form on "o" and, in the very commit that draws it, types `first`. */
function Opener({ got, listen, first }: { got: string[]; listen: Listen; first: string }) {
  const [open, setOpen] = useState(false);
  const { internal_eventEmitter: events } = useStdin();
  useKeys((input) => (input === "o" ? setOpen(true) : undefined), { isActive: !open });
  useLayoutEffect(() => {
    if (open) events.emit("input", first);
  }, [open, events, first]);
  return open ? <Form got={got} listen={listen} /> : <Text>closed</Text>;
}

const mounted: Array<{ unmount: () => void }> = [];
afterEach(() => {
  for (const m of mounted.splice(0)) m.unmount();
});

async function openForm(listen: Listen, first: string) {
  const got: string[] = [];
  const t = render(
    <KeyRouter>
      <Opener got={got} listen={listen} first={first} />
    </KeyRouter>,
  );
  mounted.push(t);
  await vi.waitFor(() => expect(t.lastFrame()).toContain("closed"));
  t.stdin.write("o");
  await vi.waitFor(() => expect(t.lastFrame()).toContain("form"));
  return { t, got };
}

describe("the KeyRouter", () => {
  it("hands a key typed in the commit that draws a form to the form's useKeys", async () => {
    const { t, got } = await openForm("keys", "x");
    expect(got).toEqual(["x"]);
    t.stdin.write("\x1b[D");
    await vi.waitFor(() => expect(got).toEqual(["x", "<left>"]));
  });

  it("hands useRawKeys the text as ink read it, from the drawing commit: escape sequences and paste markers included", async () => {
    const { t, got } = await openForm("raw", "x");
    expect(got).toEqual(['"x"']);
    t.stdin.write("\x1b[D");
    await vi.waitFor(() => expect(got).toEqual(['"x"', '"\\u001b[D"']));
    const paste = "\x1b[200~two\r\nlines\x1b[201~";
    t.stdin.write(paste);
    await vi.waitFor(() =>
      expect(
        got
          .slice(2)
          .map((g) => JSON.parse(g) as string)
          .join(""),
      ).toBe(paste),
    );
  });

  it("calls the active handlers of both kinds in the order they joined", async () => {
    const got: string[] = [];
    function Both() {
      useKeys((input) => void got.push(`first ${input}`));
      useRawKeys((raw) => void got.push(`second ${raw}`));
      useKeys((input) => void got.push(`third ${input}`));
      return <Text>both</Text>;
    }
    const t = render(
      <KeyRouter>
        <Both />
      </KeyRouter>,
    );
    mounted.push(t);
    await vi.waitFor(() => expect(t.lastFrame()).toContain("both"));
    t.stdin.write("k");
    await vi.waitFor(() => expect(got).toEqual(["first k", "second k", "third k"]));
  });

  it("is needed: useKeys or useRawKeys outside one refuse to mount and say so", async () => {
    for (const Lonely of [
      () => (useKeys(() => undefined), (<Text>lonely</Text>)),
      () => (useRawKeys(() => undefined), (<Text>lonely</Text>)),
    ]) {
      // Our own boundary shows the error: ink's error screen is not drawn as a frame when CI is set.
      const t = render(
        <ShowError>
          <Lonely />
        </ShowError>,
      );
      mounted.push(t);
      await vi.waitFor(() => expect(t.lastFrame()).toMatch(/use(Raw)?Keys needs a KeyRouter above it/));
    }
  });

  it("exists because ink's own useInput loses that key (it subscribes in a passive effect)", async () => {
    const { t, got } = await openForm("ink", "x");
    // ink listens some time later (when is the point): type until a key arrives.
    await vi.waitFor(() => {
      if (got.length === 0) t.stdin.write("y");
      expect(got).toContain("y");
    });
    expect(got).not.toContain("x");
  });
});

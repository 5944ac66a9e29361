/**
 * useKeys inside a KeyRouter listens from the commit that draws the component: a key that
 * arrives right after a form shows, before React runs passive effects, reaches the form.
 * With ink's own useInput (outside a router) that key is lost, which is what made key tests
 * (and fast typists) drop the first keys of a form under load.
 */
import { Text, useStdin } from "ink";
import { render } from "ink-testing-library";
import { useLayoutEffect, useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KeyRouter, useKeys } from "../../../cli/tui/useKeys.js";

function Form({ got }: { got: string[] }) {
  useKeys((input) => void got.push(input));
  return <Text>form</Text>;
}

/** Opens the form on "o" and, in the very commit that draws it, types "x". */
function Opener({ got }: { got: string[] }) {
  const [open, setOpen] = useState(false);
  const { internal_eventEmitter: events } = useStdin();
  useKeys((input) => (input === "o" ? setOpen(true) : undefined), { isActive: !open });
  useLayoutEffect(() => {
    if (open) events.emit("input", "x");
  }, [open, events]);
  return open ? <Form got={got} /> : <Text>closed</Text>;
}

const mounted: Array<{ unmount: () => void }> = [];
afterEach(() => {
  for (const m of mounted.splice(0)) m.unmount();
});

describe("useKeys", () => {
  it("inside a KeyRouter, a key typed in the commit that draws a form reaches the form", async () => {
    const got: string[] = [];
    const t = render(
      <KeyRouter>
        <Opener got={got} />
      </KeyRouter>,
    );
    mounted.push(t);
    await vi.waitFor(() => expect(t.lastFrame()).toContain("closed"));
    t.stdin.write("o");
    await vi.waitFor(() => expect(t.lastFrame()).toContain("form"));
    expect(got).toEqual(["x"]);
    t.stdin.write("y");
    await vi.waitFor(() => expect(got).toEqual(["x", "y"]));
  });

  it("outside a router it is ink's useInput: the same key is lost (why the router exists)", async () => {
    const got: string[] = [];
    const t = render(<Opener got={got} />);
    mounted.push(t);
    await vi.waitFor(() => expect(t.lastFrame()).toContain("closed"));
    t.stdin.write("o");
    await vi.waitFor(() => expect(t.lastFrame()).toContain("form"));
    t.stdin.write("y");
    await vi.waitFor(() => expect(got).toContain("y"));
    expect(got).toEqual(["y"]);
  });
});

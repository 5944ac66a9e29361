/** The actor mailbox: one message at a time, in order, each to completion, a failing one reported and passed. */
import { describe, expect, it } from "vitest";
import { Mailbox } from "../../supervisor/mailbox.js";

describe("Mailbox", () => {
  it("handles a post at once when idle, and posts made while handling after it, in order", () => {
    const seen: string[] = [];
    const mb: Mailbox<string> = new Mailbox(
      (m) => {
        seen.push(`start ${m}`);
        if (m === "a") {
          mb.post("b");
          mb.post("c");
        }
        if (m === "b") mb.post("d");
        seen.push(`end ${m}`);
      },
      () => expect.fail("no handler throws"),
    );
    mb.post("a");
    expect(seen).toEqual(["start a", "end a", "start b", "end b", "start c", "end c", "start d", "end d"]);
    mb.post("e");
    expect(seen.slice(-2)).toEqual(["start e", "end e"]);
  });

  it("reports a message whose handler throws and goes on with the next", () => {
    const seen: string[] = [];
    const errors: string[] = [];
    const mb: Mailbox<string> = new Mailbox(
      (m) => {
        if (m === "bad") {
          mb.post("after");
          throw new Error("boom");
        }
        seen.push(m);
      },
      (err, m) => errors.push(`${m}: ${(err as Error).message}`),
    );
    mb.post("bad");
    mb.post("next");
    expect(errors).toEqual(["bad: boom"]);
    expect(seen).toEqual(["after", "next"]);
  });
});

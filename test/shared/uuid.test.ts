import { describe, expect, it } from "vitest";
import { formatUuidV4, randomUuid } from "../../shared/uuid.js";

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("formatUuidV4", () => {
  it.each([
    { bytes: new Uint8Array(16), uuid: "00000000-0000-4000-8000-000000000000" },
    { bytes: new Uint8Array(16).fill(0xff), uuid: "ffffffff-ffff-4fff-bfff-ffffffffffff" },
    {
      bytes: Uint8Array.from([
        0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
      ]),
      uuid: "12345678-9abc-4ef0-9234-56789abcdef0",
    },
  ])("sets the version and variant bits of $uuid and keeps the rest", ({ bytes, uuid }) => {
    expect(formatUuidV4(bytes)).toBe(uuid);
    expect(formatUuidV4(bytes)).toMatch(V4);
  });

  it("leaves the caller's bytes as they were", () => {
    const bytes = new Uint8Array(16).fill(0xff);
    formatUuidV4(bytes);
    expect([...bytes]).toEqual(new Array(16).fill(0xff));
  });
});

describe("randomUuid", () => {
  it("makes v4 UUIDs that differ from each other", () => {
    const ids = Array.from({ length: 1000 }, () => randomUuid());
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

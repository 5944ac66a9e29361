import { describe, expect, it } from "vitest";
import { isoTimestamp } from "../../shared/iso-time.js";

describe("isoTimestamp", () => {
  it.each([
    0,
    1,
    -1,
    Date.UTC(2026, 11, 1, 18, 21, 6, 7),
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(0, 0, 1) - 0, // year 1900: Date.UTC maps 0 to 1900
    new Date("0000-01-01T00:00:00.000Z").getTime(),
    new Date("0099-06-15T12:00:00.000Z").getTime(),
    new Date("-000001-12-31T23:59:59.999Z").getTime(),
    new Date("+010000-01-01T00:00:00.000Z").getTime(),
  ])("spells %d as toISOString does", (ms) => {
    expect(isoTimestamp(new Date(ms))).toBe(new Date(ms).toISOString());
  });

  it("agrees with toISOString over many dates between 1970 and 2100", () => {
    // A step that is no whole number of seconds, minutes or days: every field takes many values.
    for (let ms = 0; ms < Date.UTC(2100, 0, 1); ms += 654_321_987) {
      expect(isoTimestamp(new Date(ms))).toBe(new Date(ms).toISOString());
    }
  });

  it("throws for an invalid date, as toISOString does", () => {
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});

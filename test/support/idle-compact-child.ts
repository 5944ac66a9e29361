/**
 * `collectAllAvailableGarbage` in a fresh process of its own (run with
 * `node --import jiti/register`): after a churn that leaves V8's young generation grown
 * and touched, it prints the young generation's resident bytes before and after the
 * collection as JSON, then lets the process end by itself, which it must.
 */
import { getHeapSpaceStatistics } from "node:v8";
import { collectAllAvailableGarbage } from "../../worker/modes/idle-compact.js";

const young = (): number => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.physical_space_size;
// Objects that survive a few scavenges each: V8 grows the young generation for them.
let keep: object[] = [];
for (let i = 0; i < 400_000; i++) {
  keep.push({ i, s: `item ${i}` });
  if (keep.length > 50_000) keep = [];
}
keep = [];
const before = young();
await collectAllAvailableGarbage();
process.stdout.write(`${JSON.stringify({ before, after: young() })}\n`);

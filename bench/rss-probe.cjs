// Preloaded (`node -r`) by the start-up bench into the process whose memory it breaks
// down: on SIGUSR2 it writes V8's own account of its heap to RSS_PROBE_OUT. Only for
// that measurement; the timed runs start without it.
"use strict";
process.on("SIGUSR2", () => {
  const v8 = require("node:v8");
  const spaces = v8
    .getHeapSpaceStatistics()
    .map((s) => ({ name: s.space_name, committed: s.physical_space_size, used: s.space_used_size }));
  const mu = process.memoryUsage();
  const fs = require("node:fs");
  // Whole or not at all: the bench polls for the file.
  fs.writeFileSync(
    `${process.env.RSS_PROBE_OUT}.tmp`,
    JSON.stringify({ spaces, external: mu.external, arrayBuffers: mu.arrayBuffers }),
  );
  fs.renameSync(`${process.env.RSS_PROBE_OUT}.tmp`, process.env.RSS_PROBE_OUT);
});

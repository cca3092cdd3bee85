// Loaded with `node --require` into the processes the device benchmark measures (the controller daemon and the
// bare mqtt.js client alike), and into nothing else: on SIGUSR2 it writes the process's memory figures to the
// file BENCH_MEMORY_FILE names, after a full garbage collection when node runs with --expose-gc. The daemon
// itself has no such hook; a signal it does not otherwise handle changes nothing of what it does.
const { writeFileSync, renameSync } = require('node:fs');

const file = process.env.BENCH_MEMORY_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    const collected = typeof globalThis.gc === 'function';
    if (collected) globalThis.gc();
    const usage = process.memoryUsage();
    writeFileSync(`${file}.tmp`, JSON.stringify({ ...usage, collected }));
    renameSync(`${file}.tmp`, file);
  });
}

import type { ToolOutput } from './command.js';
import { runCompanyTool } from './tool.js';

/** `gatelink-company`: the commands are company/tool.ts; this is only the process around them. */
const io: ToolOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};
// Ctrl-C ends a command that runs until stopped (listen) in its own words; a second one ends the process.
const stop = new AbortController();
process.once('SIGINT', () => {
  stop.abort();
  process.once('SIGINT', () => process.exit(130));
});
process.once('SIGTERM', () => stop.abort());
process.exitCode = await runCompanyTool(process.argv.slice(2), io, process.env, stop.signal);

import type { ToolOutput } from './command.js';
import { runCompanyTool } from './tool.js';

/** `gatelink-company`: the commands are company/tool.ts; this is only the process around them. */
const io: ToolOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};
process.exitCode = await runCompanyTool(process.argv.slice(2), io);

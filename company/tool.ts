import { isGatelinkError } from './client/index.js';
import { type Command, type Environment, readOptions, type ToolOutput } from './command.js';
import { UsageError } from './key-file.js';
import { keygen } from './keygen.js';
import { listen } from './listen.js';
import { open } from './open.js';
import { printJson } from './printing.js';
import { prove } from './prove.js';
import { request } from './request.js';
import { sign } from './sign.js';
import { status } from './status.js';
import { trigger } from './trigger.js';
import { verifyWebhookCommand } from './verify-webhook.js';

/**
 * The commands of `gatelink-company` (`npm run company`, company/main.ts): the tool the project ships for
 * companies (docs/design.md section 11.2): their key pair, the calls of the company API through the typed client
 * (company/client/), and the check of a saved event delivery. It stands on shared/ and company/ only, the very
 * rules the service checks by, and never on the service's own code.
 */
const COMMANDS: readonly Command[] = [
  keygen,
  prove,
  request,
  status,
  open,
  trigger,
  listen,
  verifyWebhookCommand,
  sign,
];

const USAGE = `Usage: gatelink-company <command> [options]

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(15)} ${command.summary}`).join('\n')}

Run gatelink-company <command> --help for a command's options.`;

/**
 * Runs one command line; resolves to the exit code: 2 for a usage error, 1 for a failure or a refusal. With
 * --json, an error is printed as JSON on stdout too: {"error", "message", "request_id"}.
 */
export async function runCompanyTool(
  argv: readonly string[],
  io: ToolOutput,
  env: Environment = process.env,
  stop?: AbortSignal,
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(`${USAGE}\n`);
    return 0;
  }
  const command = COMMANDS.find((entry) => entry.name === name);
  const json = args.includes('--json');
  try {
    if (!command) throw new UsageError(`unknown command "${name}"`);
    const values = readOptions(command, args);
    if (values.help === true) {
      io.out(`${command.usage}\n`);
      return 0;
    }
    return await command.run(values, io, env, stop);
  } catch (error) {
    if (json) return printError(error, io);
    return reportError(error, command, io);
  }
}

function reportError(error: unknown, command: Command | undefined, io: ToolOutput): number {
  if (isGatelinkError(error)) {
    const requestId = error.requestId ? ` (request id ${error.requestId})` : '';
    io.err(`gatelink-company: ${error.code}: ${error.message}${requestId}\n`);
    return 1;
  }
  io.err(`gatelink-company: ${error instanceof Error ? error.message : String(error)}\n`);
  if (error instanceof UsageError) {
    io.err(`Run gatelink-company ${command ? `${command.name} ` : ''}--help for its usage.\n`);
    return 2;
  }
  return 1;
}

/** The error as the one JSON object a script reads: the cloud's code, or `usage` / `failed` for the tool's own. */
function printError(error: unknown, io: ToolOutput): number {
  if (isGatelinkError(error)) {
    printJson(io, {
      error: error.code,
      message: error.message,
      request_id: error.requestId ?? null,
      ...(error.field === undefined ? {} : { field: error.field }),
      ...(error.detail === undefined ? {} : { detail: error.detail }),
    });
    return 1;
  }
  const usage = error instanceof UsageError;
  const message = error instanceof Error ? error.message : String(error);
  printJson(io, { error: usage ? 'usage' : 'failed', message, request_id: null });
  return usage ? 2 : 1;
}

import { type Command, readOptions, type ToolOutput } from './command.js';
import { UsageError } from './key-file.js';
import { keygen } from './keygen.js';
import { prove } from './prove.js';
import { sign } from './sign.js';

/**
 * The commands of `gatelink-company` (`npm run company`, company/main.ts): the key-pair tool the project ships for companies that sign their
 * calls with their domain's key (docs/design.md section 11.2). It stands on shared/ only, the very rules the
 * service checks by, and never on the service's own code.
 */
const COMMANDS: readonly Command[] = [keygen, prove, sign];

const USAGE = `Usage: gatelink-company <command> [options]

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(8)} ${command.summary}`).join('\n')}

Run gatelink-company <command> --help for a command's options.`;

/** Runs one command line; resolves to the exit code (2 for a usage error, 1 for a failure). */
export async function runCompanyTool(argv: readonly string[], io: ToolOutput): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(`${USAGE}\n`);
    return 0;
  }
  const command = COMMANDS.find((entry) => entry.name === name);
  try {
    if (!command) throw new UsageError(`unknown command "${name}"`);
    const values = readOptions(command, args);
    if (values.help === true) {
      io.out(`${command.usage}\n`);
      return 0;
    }
    return await command.run(values, io);
  } catch (error) {
    io.err(`gatelink-company: ${error instanceof Error ? error.message : String(error)}\n`);
    if (error instanceof UsageError) {
      io.err(`Run gatelink-company ${command ? `${command.name} ` : ''}--help for its usage.\n`);
      return 2;
    }
    return 1;
  }
}

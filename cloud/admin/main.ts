import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { commandUsage, findCommand } from './commands.js';
import { type Connection, UsageError } from './operator-client.js';

/**
 * `gatelink-admin`: the operators' command line. It speaks only to the operator API under /ops/ (the
 * database may be an embedded one that a single process owns), with `--url` and `--token` or the same
 * from the environment. The commands are a table, commands.ts.
 */
const USAGE = `Usage: gatelink-admin [--url URL] [--token TOKEN] [--json] <command>

Commands:
${commandUsage()}

Connection: --url, else GATELINK_URL, else http://localhost:8080.
Token: --token, else OPERATOR_TOKEN, else the file <GATELINK_DATA_DIR or ./.data>/operator-token.`;

async function run(argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      domain: { type: 'string' },
      email: { type: 'string' },
      label: { type: 'string' },
      device: { type: 'string' },
      company: { type: 'string' },
      limit: { type: 'string' },
      reason: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length === 0) return USAGE;
  const connection: Connection = {
    url: values.url ?? process.env.GATELINK_URL ?? 'http://localhost:8080',
    token: values.token ?? process.env.OPERATOR_TOKEN ?? readTokenFile(),
    json: values.json,
  };
  const command = findCommand(positionals);
  if (!command) throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  const arg = positionals[command.name.split(' ').length];
  const output = await command.run({ connection, flags: values, arg });
  return connection.json ? JSON.stringify(output.answer, null, 2) : output.text();
}

function readTokenFile(): string {
  const file = resolve(process.env.GATELINK_DATA_DIR ?? './.data', 'operator-token');
  if (!existsSync(file)) {
    throw new UsageError(`no operator token: pass --token, set OPERATOR_TOKEN, or run where ${file} exists`);
  }
  return readFileSync(file, 'utf8').trim();
}

run(process.argv.slice(2)).then(
  (output) => process.stdout.write(`${output}\n`),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`gatelink-admin: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write('Run gatelink-admin --help for the commands.\n');
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);

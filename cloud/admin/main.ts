import { parseArgs } from 'node:util';
import { findCloud, programName } from './cloud-lookup.js';
import { commandUsage, findCommand, groupCommands } from './commands.js';
import { type Connection, UsageError } from './operator-client.js';

/**
 * `gatelink-admin`: the operators' command line. It speaks only to the operator API under /ops/ (the
 * database may be an embedded one that a single process owns), but for `keys init`, `backup` and `restore`, which work
 * on the cloud's own files and database with its settings. It finds its cloud itself (cloud-lookup.ts).
 * The commands are a table, commands.ts.
 */
const PROGRAM = programName(process.env);

const USAGE = `Usage: ${PROGRAM} [--url URL] [--token TOKEN] [--json] <command>

Commands:
${commandUsage()}

Connection: --url, else GATELINK_URL, else the cloud running on the data folder (GATELINK_DATA_DIR or ./.data),
else BASE_URL or http://127.0.0.1:PORT.
Token: --token, else OPERATOR_TOKEN, else the data folder's operator-token file (sent only to the cloud on that
folder or to an address you named).
keys init, backup and restore read the cloud's own environment (DATABASE_URL, GATELINK_DATA_DIR,
SIGNING_KEY_FILE, OPERATOR_TOKEN) and call no cloud: run keys init once on the server before the first
production start, and copy the key file to every other instance on the same database.
release keygen and release sign work on files alone, on the machine that keeps the release key.`;

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
      key: { type: 'string' },
      out: { type: 'string' },
      manifest: { type: 'string' },
      all: { type: 'boolean' },
      percent: { type: 'string' },
      devices: { type: 'string' },
      downgrade: { type: 'boolean' },
      'stop-at': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length === 0) return USAGE;
  const command = findCommand(positionals);
  if (!command) {
    const group = groupCommands(positionals[0]);
    if (group.length > 0 && positionals.length === 1) {
      return `${PROGRAM} ${positionals[0]} <command>:\n${commandUsage(group)}`;
    }
    throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  }
  const args = positionals.slice(command.name.split(' ').length);
  const arg = args[0];
  if (command.local) {
    const output = await command.run(process.env, arg, values);
    return values.json ? JSON.stringify(output.answer, null, 2) : output.text();
  }
  const target = findCloud({ url: values.url, token: values.token, env: process.env, program: PROGRAM });
  const connection: Connection = { ...target, json: values.json };
  const output = await command.run({ connection, flags: values, arg, args, program: PROGRAM });
  return connection.json ? JSON.stringify(output.answer, null, 2) : output.text();
}

run(process.argv.slice(2)).then(
  (output) => process.stdout.write(`${output}\n`),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`gatelink-admin: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write(`Run ${PROGRAM} --help for the commands.\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);

import { existsSync, statSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { loadConfig } from '../config.js';
import { readStatus } from '../runtime/status.js';
import { cliError } from './cli-error.js';
import { daemonAlive } from './daemon-running.js';

export interface ResetOptions {
  configPath: string;
  yes: boolean;
  print?: (line: string) => void;
  /** Asks the installer; by default on the terminal, refused when there is none. */
  confirm?: (question: string) => Promise<boolean>;
}

/**
 * `gatelink-device reset` (docs/design.md section 9.1): wipes this controller's key, config and state folder
 * (with the outbox), so it can be provisioned again with a new code, as a new controller. Refused while the
 * daemon runs, since it holds the state folder; asks first unless `--yes`.
 */
export async function resetCommand(options: ResetOptions): Promise<number> {
  const print = options.print ?? ((line: string) => console.log(line));
  const config = loadConfig(options.configPath);
  if (daemonAlive(await readStatus(config.state_dir).catch(() => null))) throw cliError('daemon_running');
  const targets = [config.private_key_file, config.config_file, config.state_dir, config.outbox_dir].filter(
    (path, index, all) => all.indexOf(path) === index && existsSync(path),
  );
  if (!options.yes) {
    const question = `Delete ${targets.join(', ')} of controller ${config.device_id}? [y/N] `;
    const yes = await (options.confirm ?? askOnTerminal)(question);
    if (!yes) {
      print('Nothing deleted.');
      return 1;
    }
  }
  for (const path of targets) await wipe(path);
  print(`Removed: ${targets.length > 0 ? targets.join(', ') : 'nothing (already gone)'}.`);
  print(`This board is no longer controller ${config.device_id}. Next:`);
  print(`  - the operator retires the old record: gatelink-admin device remove ${config.device_id}`);
  print(
    '    (or, for a broken controller replaced at its barrier, the customer or operator replaces it first);',
  );
  print('  - for this board, the operator makes a new one: gatelink-admin device add --label ...,');
  print('    then: gatelink-device provision --cloud <url> --code <code> --objects-from <objects file>.');
  return 0;
}

/**
 * A file is removed; a folder is emptied but kept: the state folder is systemd's (StateDirectory=), in a parent
 * the daemon's user cannot write, and the next daemon needs it again.
 */
async function wipe(path: string): Promise<void> {
  if (!statSync(path).isDirectory()) {
    await rm(path, { force: true });
    return;
  }
  for (const entry of await readdir(path)) await rm(join(path, entry), { recursive: true, force: true });
}

async function askOnTerminal(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw cliError('reset_needs_confirmation');
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim());
  } finally {
    terminal.close();
  }
}

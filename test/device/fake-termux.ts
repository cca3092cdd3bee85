import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './fixtures.js';

/**
 * How the fake phone answers, as Termux:API does on a real one (docs/design.md section 12.6):
 * - `rejects`: the module rejects the call at once; the log shows OUTGOING, 00:00.
 * - `answers`: the module picks up for 4 s; the log shows OUTGOING, 00:04.
 * - `rings`: the call stays up until the log was read `ringReads` times, then shows as `rejects` does.
 * - `no-sim`: telephony device info says sim_state absent and no operator.
 * - `airplane`: SIM ready, no operator.
 * - `call-permission`: termux-telephony-call prints the permission error for CALL_PHONE.
 * - `log-permission`: termux-call-log prints the permission error for READ_CALL_LOG.
 * - `no-api-app`: every Termux:API command waits for ever, as without the Termux:API app.
 */
export type PhoneScenario =
  | 'rejects'
  | 'answers'
  | 'rings'
  | 'no-sim'
  | 'airplane'
  | 'call-permission'
  | 'log-permission'
  | 'no-api-app';

export const TERMUX_COMMANDS = [
  'termux-telephony-call',
  'termux-call-log',
  'termux-telephony-deviceinfo',
  'termux-battery-status',
  'termux-wake-lock',
  'termux-wake-unlock',
] as const;

/**
 * One small Node.js program behind every fake command (by the name it is run as). It keeps the phone's state in
 * `state.json` beside it: the scenario, the numbers dialled, the call log and the call still up.
 */
const FAKE_PROGRAM = `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const command = path.basename(process.argv[1]);
const args = process.argv.slice(2);
const file = path.join(path.dirname(process.argv[1]), '..', 'state.json');
const state = JSON.parse(fs.readFileSync(file, 'utf8'));
// Renamed into place, so that a command running meanwhile never reads half a file.
const save = () => { fs.writeFileSync(file + '.' + process.pid, JSON.stringify(state)); fs.renameSync(file + '.' + process.pid, file); };
const print = (value) => process.stdout.write(JSON.stringify(value, null, 2) + '\\n');
const permission = (name) => print({ error: 'Please grant the following permission to use this command: android.permission.' + name });
state.runs.push({ command, args });
save();
const apiCommand = !command.startsWith('termux-wake');
if (state.scenario === 'no-api-app' && apiCommand) setInterval(() => {}, 1000);
else run();
function logEntry(number, duration) {
  const n = state.log.length;
  state.log.push({ name: 'UNKNOWN_CALLER', phone_number: number, type: 'OUTGOING',
    date: '2026-11-28 18:' + String(Math.floor(n / 60)).padStart(2, '0') + ':' + String(n % 60).padStart(2, '0'),
    duration, sim_id: '1' });
}
function run() {
  switch (command) {
    case 'termux-telephony-deviceinfo': {
      const sim = state.scenario === 'no-sim' ? 'absent' : 'ready';
      const operator = state.scenario === 'no-sim' || state.scenario === 'airplane' ? '' : '26201';
      print({ data_enabled: 'true', data_activity: 'none', data_state: 'connected', device_id: null,
        device_software_version: '01', phone_count: 1, phone_type: 'gsm', network_operator: operator,
        network_operator_name: operator ? 'Telekom.de' : '', network_country_iso: 'de', network_type: operator ? 'lte' : 'unknown',
        network_roaming: false, sim_country_iso: 'de', sim_operator: '26201', sim_operator_name: 'Telekom.de',
        sim_serial_number: null, sim_subscriber_id: null, sim_state: sim });
      return;
    }
    case 'termux-telephony-call': {
      if (args.length !== 1) { process.stderr.write('termux-telephony-call: No single number to call specified.\\n'); process.exit(1); }
      if (state.scenario === 'call-permission') return permission('CALL_PHONE');
      state.dialled.push(args[0]);
      if (state.scenario === 'rings') state.up = { number: args[0], reads: 0 };
      else logEntry(args[0], state.scenario === 'answers' ? '00:04' : '00:00');
      save();
      return;
    }
    case 'termux-call-log': {
      if (state.scenario === 'log-permission') return permission('READ_CALL_LOG');
      if (state.up && ++state.up.reads >= state.ringReads) { logEntry(state.up.number, '00:00'); state.up = null; }
      save();
      const limit = Number(args[args.indexOf('-l') + 1] || 10);
      print(state.log.slice(-limit));
      return;
    }
    case 'termux-battery-status':
      print({ present: true, technology: 'Li-ion', health: 'GOOD', plugged: state.plugged, status: 'DISCHARGING',
        temperature: 27.5, voltage: 3900, current: -250000, percentage: state.percentage, level: state.percentage, scale: 100 });
      return;
    default:
      return;
  }
}
`;

interface FakeState {
  scenario: PhoneScenario;
  ringReads: number;
  runs: { command: string; args: string[] }[];
  dialled: string[];
  log: unknown[];
  up: { number: string; reads: number } | null;
  percentage: number;
  plugged: string;
}

/** Fake Termux:API commands in a temporary folder, put first on PATH of `env`. */
export class FakeTermux {
  readonly env: Record<string, string | undefined>;
  readonly home: string;
  readonly #dir: string;
  readonly #cleanup: () => Promise<void>;
  #node = '/usr/bin/env node';

  private constructor(dir: string, cleanup: () => Promise<void>) {
    this.#dir = dir;
    this.#cleanup = cleanup;
    this.home = join(dir, 'home');
    this.env = { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}`, HOME: this.home };
  }

  static async create(scenario: PhoneScenario = 'rejects'): Promise<FakeTermux> {
    const { dir, cleanup } = await tempDir();
    const fake = new FakeTermux(dir, cleanup);
    await mkdir(join(dir, 'bin'));
    await mkdir(fake.home);
    for (const command of TERMUX_COMMANDS) await fake.install(command);
    await fake.#write({
      scenario,
      ringReads: 3,
      runs: [],
      dialled: [],
      log: [],
      up: null,
      percentage: 87,
      plugged: 'UNPLUGGED',
    });
    return fake;
  }

  async install(command: (typeof TERMUX_COMMANDS)[number]): Promise<void> {
    const file = join(this.#dir, 'bin', command);
    await writeFile(file, FAKE_PROGRAM.replace('#!/usr/bin/env node', `#!${this.#node}`));
    await chmod(file, 0o755);
  }

  /**
   * Runs the stand-ins with this Node.js rather than the one on PATH: where `node` on PATH is the phone's (an
   * arm64 build under emulation), Termux:API's commands, which are not Node.js programs on a phone, stay quick.
   */
  async runWith(node: string): Promise<void> {
    this.#node = node;
    for (const command of TERMUX_COMMANDS) await this.install(command);
  }

  /** The folder of the stand-ins, to put on another PATH. */
  get bin(): string {
    return join(this.#dir, 'bin');
  }

  /** As on a phone without the termux-api package: the command is not on PATH. */
  async remove(command: (typeof TERMUX_COMMANDS)[number]): Promise<void> {
    await rm(join(this.#dir, 'bin', command));
  }

  async set(patch: Partial<Pick<FakeState, 'scenario' | 'ringReads' | 'percentage' | 'plugged'>>) {
    await this.#write({ ...(await this.state()), ...patch });
  }

  async state(): Promise<FakeState> {
    return JSON.parse(await readFile(join(this.#dir, 'state.json'), 'utf8')) as FakeState;
  }

  /** Changes the phone's answers at once, for a probe that cannot wait (the driver contract's). */
  setSync(patch: Partial<Pick<FakeState, 'scenario' | 'ringReads'>>): void {
    const file = join(this.#dir, 'state.json');
    const state = JSON.parse(readFileSync(file, 'utf8')) as FakeState;
    writeFileSync(`${file}.test`, JSON.stringify({ ...state, ...patch }));
    renameSync(`${file}.test`, file);
  }

  /** The numbers called so far, read at once. */
  dialledSync(): string[] {
    return (JSON.parse(readFileSync(join(this.#dir, 'state.json'), 'utf8')) as FakeState).dialled;
  }

  /** The numbers called so far (each call placed, not a refused attempt). */
  async dialled(): Promise<string[]> {
    return (await this.state()).dialled;
  }

  /** True when no call of ours is still up. */
  async idle(): Promise<boolean> {
    return (await this.state()).up === null;
  }

  dispose(): Promise<void> {
    return this.#cleanup();
  }

  async #write(state: FakeState): Promise<void> {
    const file = join(this.#dir, 'state.json');
    await writeFile(`${file}.test`, JSON.stringify(state));
    renameSync(`${file}.test`, file);
  }
}

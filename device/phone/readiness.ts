import { access, constants, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { DeviceConfig } from '../config.js';
import { cannotCall, telephonyInfoSchema } from './telephony-info.js';
import { readTermuxJson } from './termux-answer.js';
import { runTermux, type TermuxResult } from './termux-command.js';

/**
 * What an Android phone needs to serve as a controller that stays online, checked where the controller starts
 * when its config has phone objects (docs/design.md section 12.6). Each item that is missing is one line that
 * says what to do; the controller runs anyway, since a phone short of a start on boot still opens today.
 *
 * Checked: Termux:API's commands and app (a harmless command answers), the call log and phone state
 * permissions (their commands answer or name the permission), the SIM and network, a script in
 * `~/.termux/boot/`, and the clock check of the config.
 *
 * Not checkable from Termux, said once as such:
 * - CALL_PHONE: only a call shows it. Android's settings grant the Phone group, READ_PHONE_STATE with
 *   CALL_PHONE, so a granted phone state is a good sign, not a proof; the first opening names it if missing.
 * - Battery optimisation: whether Android exempts Termux is `dumpsys deviceidle`, which needs the DUMP
 *   permission no app is given.
 * - Termux:Boot installed: an app's presence is not visible from Termux's shell; only the boot folder is.
 * - The wake lock: `termux-wake-lock` (Termux's own tools) takes it and answers nothing; there is no query.
 */
export interface ReadinessItem {
  item: string;
  state: 'ready' | 'missing' | 'unknown';
  /** What to do, for an item missing or unknown. */
  todo?: string;
}

export interface ReadinessOptions {
  config: Pick<DeviceConfig, 'clock'>;
  /** Termux's home, where `.termux/boot/` lives; HOME of `env` by default. */
  home?: string;
  env?: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
}

const anyJson = z.unknown();

/** Every check at once (each Termux:API command takes up to a second on Android 14); never rejects. */
export async function phoneReadiness(options: ReadinessOptions): Promise<ReadinessItem[]> {
  const run = (command: string, args: readonly string[]) =>
    runTermux(command, args, { timeoutMs: options.timeoutMs, env: options.env });
  const [api, log, info, boot] = await Promise.all([
    run('termux-battery-status', []),
    run('termux-call-log', ['-l', '1']),
    run('termux-telephony-deviceinfo', []),
    bootScript(options.home ?? options.env?.HOME ?? process.env.HOME),
  ]);
  return [
    apiItem(api),
    permissionItem('call log', log, 'READ_CALL_LOG', 'Call logs', 'openings are reported only as placed'),
    ...phoneStateItems(info),
    boot,
    clockItem(options.config),
    {
      item: 'battery optimisation',
      state: 'unknown',
      todo: 'not checkable from Termux: set Termux and Termux:API to Unrestricted in Settings, Apps, Battery, so that Android does not stop the controller',
    },
  ];
}

/**
 * Takes Termux's wake lock, so that Android does not suspend the CPU under the controller with the screen off;
 * held until `releaseWakeLock` (or Termux ends). `termux-wake-lock` is Termux's own (termux-tools), not
 * Termux:API's; it prints nothing and cannot be asked whether the lock is held.
 */
export async function takeWakeLock(
  options: Omit<ReadinessOptions, 'config' | 'home'>,
): Promise<ReadinessItem> {
  const result = await runTermux('termux-wake-lock', [], { timeoutMs: options.timeoutMs, env: options.env });
  const item = 'wake lock';
  if (result.kind === 'done') return { item, state: 'ready' };
  const why =
    result.kind === 'missing' ? 'termux-wake-lock is not on PATH' : `termux-wake-lock: ${result.kind}`;
  return {
    item,
    state: 'missing',
    todo: `${why}: run the controller in Termux, or hold the lock from Termux's notification (Acquire wakelock)`,
  };
}

export async function releaseWakeLock(options: Omit<ReadinessOptions, 'config' | 'home'>): Promise<void> {
  await runTermux('termux-wake-unlock', [], { timeoutMs: options.timeoutMs, env: options.env });
}

/** The lines for the log: one per item not ready. */
export function readinessLines(items: readonly ReadinessItem[]): string[] {
  return items
    .filter((item) => item.state !== 'ready')
    .map((item) => `phone: ${item.item}: ${item.state === 'missing' ? '' : 'unknown; '}${item.todo}`);
}

function apiItem(result: TermuxResult): ReadinessItem {
  const item = 'Termux:API';
  if (result.kind === 'done') return { item, state: 'ready' };
  if (result.kind === 'missing')
    return { item, state: 'missing', todo: "install Termux:API's commands: pkg install termux-api" };
  if (result.kind === 'timeout')
    return {
      item,
      state: 'missing',
      todo: 'its commands get no answer: install the Termux:API app from where Termux came from (F-Droid or GitHub) and open it once',
    };
  return { item, state: 'missing', todo: `its commands fail (${result.detail}): reinstall termux-api` };
}

function permissionItem(
  item: string,
  result: TermuxResult,
  permission: string,
  setting: string,
  without: string,
): ReadinessItem {
  if (result.kind !== 'done')
    return { item, state: 'unknown', todo: 'Termux:API does not answer (see above)' };
  const answer = readTermuxJson(result.stdout, anyJson);
  if (answer.kind !== 'permission') return { item, state: 'ready' };
  return {
    item,
    state: 'missing',
    todo: `grant Termux:API the ${setting} permission (android.permission.${permission}) in Settings, Apps, Termux:API, Permissions; without it ${without}`,
  };
}

function phoneStateItems(result: TermuxResult): ReadinessItem[] {
  const permission = permissionItem(
    'phone state',
    result,
    'READ_PHONE_STATE',
    'Phone',
    'an opening cannot tell no SIM or no network before it dials (the same setting lets it call)',
  );
  if (permission.state !== 'ready' || result.kind !== 'done') return [permission];
  const answer = readTermuxJson(result.stdout, telephonyInfoSchema);
  const why = answer.kind === 'value' ? cannotCall(answer.value) : null;
  return [
    permission,
    why === null
      ? { item: 'SIM and network', state: 'ready' }
      : {
          item: 'SIM and network',
          state: 'missing',
          todo: `${why}; openings fail with no_network until then`,
        },
  ];
}

/** Termux:Boot runs every executable file of `~/.termux/boot/` at boot. */
async function bootScript(home: string | undefined): Promise<ReadinessItem> {
  const item = 'start on boot';
  const todo =
    'install Termux:Boot, open it once, and put an executable script in ~/.termux/boot/ that runs termux-wake-lock and then gatelink-device run';
  if (!home) return { item, state: 'unknown', todo };
  const folder = join(home, '.termux', 'boot');
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    const runnable = await access(join(folder, name), constants.X_OK).then(
      () => true,
      () => false,
    );
    if (runnable) return { item, state: 'ready' };
  }
  return { item, state: 'missing', todo };
}

/** Android has neither timedatectl nor timesyncd; it sets its clock from the network itself. */
function clockItem(config: Pick<DeviceConfig, 'clock'>): ReadinessItem {
  const item = 'clock check';
  if (config.clock.check === 'none') return { item, state: 'ready' };
  return {
    item,
    state: 'missing',
    todo: `clock.check is ${config.clock.check}, which Android lacks, so every command would be refused clock_unsynced: set clock: check: none, and turn on Settings, Date & time, Set time automatically`,
  };
}

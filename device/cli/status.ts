import { type DeviceConfig, loadConfig } from '../config.js';
import { clockAdvice } from '../runtime/clock.js';
import { countWaiting } from '../runtime/outbox.js';
import { type DaemonStatus, readStatus } from '../runtime/status.js';
import { type HomeView, installedHome, viewHome } from '../updates/installed-home.js';
import { daemonAlive } from './daemon-running.js';
import { fetchPairingCode, rememberedPairing } from './pairing-code.js';

export interface StatusOptions {
  configPath: string;
  json: boolean;
  print?: (line: string) => void;
  now?: () => Date;
  /** The installed home; by default the one this program runs from (none in a checkout). */
  home?: string | null;
}

/**
 * `gatelink-device status`: what the daemon last wrote to `<state_dir>/status.json`. The outbox is the
 * daemon's own count while it runs; otherwise it is counted from disk, which the daemon leaves exact when it
 * stops (while it runs, the record that an acknowledgement was sent reaches the disk with the next one).
 * Exit code 0 when the daemon runs and is connected, 1 otherwise.
 */
export async function statusCommand(options: StatusOptions): Promise<number> {
  const print = options.print ?? ((line: string) => console.log(line));
  const config = loadConfig(options.configPath);
  const status = await readStatus(config.state_dir).catch(() => null);
  const alive = daemonAlive(status);
  const outbox = alive && status ? status.outbox : await countWaiting(config.outbox_dir).catch(() => 0);
  const connected = alive && (status?.mqtt.connected ?? false);
  const pairing = await pairingNow(config, options.now ?? (() => new Date()));
  const home = options.home === undefined ? installedHome() : options.home;
  const installed = home ? viewHome(home) : null;
  if (options.json) {
    print(
      JSON.stringify(
        {
          device_id: config.device_id,
          daemon_running: alive,
          connected,
          outbox,
          status,
          pairing,
          installed,
        },
        null,
        2,
      ),
    );
    return connected ? 0 : 1;
  }
  const rows = [
    ...lines(config, status, alive, outbox),
    ...pairingLines(pairing, options.now?.() ?? new Date()),
    ...homeLines(installed),
  ];
  for (const [name, value] of rows) print(`${name.padEnd(13)}${value}`);
  return connected ? 0 : 1;
}

function lines(
  config: Pick<DeviceConfig, 'device_id' | 'clock'>,
  status: DaemonStatus | null,
  alive: boolean,
  outbox: number,
): [string, string][] {
  const at = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  const rows: [string, string][] = [['device', config.device_id]];
  if (!status) {
    rows.push(['daemon', 'has not run yet with this config (sudo systemctl start gatelink-device)']);
  } else if (!alive) {
    rows.push(['daemon', `not running (last seen ${at(status.updated_at)})`]);
  } else {
    rows.push([
      'daemon',
      `running, version ${status.version}, pid ${status.pid}, since ${at(status.started_at)}`,
    ]);
    rows.push([
      'connection',
      status.mqtt.connected
        ? `connected to ${status.mqtt.url}${status.mqtt.since ? ` since ${at(status.mqtt.since)}` : ''}`
        : `NOT connected to ${status.mqtt.url} (retrying; ${status.mqtt.last_error ?? 'check the network'})`,
    ]);
    rows.push([
      'clock',
      status.clock_synced
        ? 'synchronised'
        : `NOT synchronised: commands are refused; ${clockAdvice(config.clock.check)}`,
    ]);
    if (status.modem !== null) {
      rows.push(['modem', `${status.modem}${status.signal !== null ? `, signal ${status.signal}/31` : ''}`]);
    }
  }
  if (alive) rows.push(...sensorLines(status?.sensors ?? [], at));
  const last = status?.last_command;
  rows.push([
    'last command',
    last
      ? `${at(last.finished_at)} ${last.object}: ${last.outcome}${last.reason ? ` (${last.reason})` : ''}, id ${last.id}`
      : 'none yet',
  ]);
  rows.push([
    'outbox',
    outbox === 0 ? 'empty' : `${outbox} acknowledgement(s) or report(s) waiting to be sent`,
  ]);
  return rows;
}

/** One row per position sensor: the gate's position and since when (docs/design.md section 12.5). */
function sensorLines(sensors: DaemonStatus['sensors'], at: (ms: number) => string): [string, string][] {
  return sensors.map((sensor) => [
    'sensor',
    `${sensor.object}: gate ${sensor.position}${sensor.since === null ? ' (since when is known once the clock is synchronised)' : ` since ${at(sensor.since)}`}`,
  ]);
}

/** What status knows of the pairing code: the cloud's answer now, else what it last said, else nothing. */
interface PairingSeen {
  source: 'cloud' | 'remembered';
  paired: boolean;
  pairing_code: string | null;
  pairing_expires_at: string | null;
  heard_at?: string;
  /** Why the cloud was not asked or did not answer. */
  problem?: string;
}

/**
 * Best effort (docs/design.md section 9.1): no network failure, missing key or refusal makes status fail;
 * status then shows the code provisioning or the last `pairing-code` remembered in the state folder.
 */
async function pairingNow(config: DeviceConfig, now: () => Date): Promise<PairingSeen | null> {
  try {
    const answer = await fetchPairingCode(config, { now, timeoutMs: PAIRING_TIMEOUT_MS });
    return { source: 'cloud', ...answer };
  } catch (error) {
    const remembered = await rememberedPairing(config.state_dir);
    const problem = (error as Error).message;
    return remembered ? { source: 'remembered', ...remembered, problem } : null;
  }
}

/** Status waits this long for the cloud at most: it is a quick look, and the answer is only a hint. */
const PAIRING_TIMEOUT_MS = 3000;

function pairingLines(pairing: PairingSeen | null, now: Date): [string, string][] {
  if (!pairing) return [];
  if (pairing.paired) {
    return pairing.source === 'cloud' ? [['pairing', "on a customer's account"]] : [];
  }
  if (!pairing.pairing_code || !pairing.pairing_expires_at) return [];
  const expires = pairing.pairing_expires_at;
  const expired = new Date(expires) <= now;
  const said = pairing.source === 'cloud' ? '' : ` (remembered from ${pairing.heard_at}; cloud not reached)`;
  return [
    [
      'pairing code',
      expired
        ? `${pairing.pairing_code} expired at ${expires}${said}; run gatelink-device pairing-code for a new one`
        : `${pairing.pairing_code}, valid until ${expires}${said}: the customer adds the barrier with it`,
    ],
  ];
}

/** The releases the home's links name, and the last update with why it ended as it did (section 12.4.3). */
function homeLines(view: HomeView | null): [string, string][] {
  if (!view) return [];
  const rows: [string, string][] = [
    [
      'release',
      `${view.current ?? 'none'}${view.knownGood && view.knownGood !== view.current ? ` (known-good: ${view.knownGood})` : ''}`,
    ],
  ];
  const update = view.update;
  if (!update) return rows;
  const when = `${new Date(update.at).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  const why = update.reason ? ` (${update.reason}${update.detail ? `: ${update.detail}` : ''})` : '';
  const said: Record<typeof update.phase, string> = {
    trial: `${update.version} on trial since ${when}, started ${update.starts} time(s): kept once healthy`,
    healthy: `${update.version} healthy since ${when}`,
    rolled_back: `${update.version} rolled back at ${when}${why}; ${update.from} runs`,
    failed: `${update.version} failed at ${when}${why}; ${update.from} runs`,
  };
  rows.push(['update', `${said[update.phase]} (rollout ${update.rollout_id})`]);
  return rows;
}

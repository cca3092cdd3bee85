import { type DeviceConfig, loadConfig } from '../config.js';
import { clockAdvice } from '../runtime/clock.js';
import { countWaiting } from '../runtime/outbox.js';
import { type DaemonStatus, readStatus } from '../runtime/status.js';
import { daemonAlive } from './daemon-running.js';

export interface StatusOptions {
  configPath: string;
  json: boolean;
  print?: (line: string) => void;
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
  if (options.json) {
    print(
      JSON.stringify(
        { device_id: config.device_id, daemon_running: alive, connected, outbox, status },
        null,
        2,
      ),
    );
    return connected ? 0 : 1;
  }
  for (const [name, value] of lines(config, status, alive, outbox)) print(`${name.padEnd(13)}${value}`);
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
  const last = status?.last_command;
  rows.push([
    'last command',
    last
      ? `${at(last.finished_at)} ${last.object}: ${last.outcome}${last.reason ? ` (${last.reason})` : ''}, id ${last.id}`
      : 'none yet',
  ]);
  rows.push(['outbox', outbox === 0 ? 'empty' : `${outbox} acknowledgement(s) waiting to be sent`]);
  return rows;
}

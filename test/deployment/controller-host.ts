import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { Host, Lab, SpawnedProcess } from './network.js';
import { ROOT, SERVER_NAME } from './server-host.js';

/**
 * The controller host: the compiled controller daemon (bin/gatelink-device.mjs) provisioned over HTTPS against
 * the server's name, trusting only the CA file it is given (the bundle of Caddy's root, for the provisioning
 * call, and the broker's CA), then run as a board runs it.
 */
const DEVICE = join(ROOT, 'bin/gatelink-device.mjs');
const OBJECTS =
  'objects:\n  - {id: gate, label: Main gate, kind: simulated, pulse_ms: 0}\nclock:\n  check: none\n';

export interface ProvisionedController {
  readonly configFile: string;
  readonly deviceId: string;
  readonly pairingCode: string;
  readonly gateNumberId: number;
  /** The broker credentials and command key as the config holds them. */
  readonly username: string;
  readonly password: string;
  readonly commandKey: string;
  readonly brokerUrl: string;
  readonly caFile: string | undefined;
}

export async function provisionController(
  lab: Lab,
  host: Host,
  options: { folder: string; code: string; caFile: string },
): Promise<ProvisionedController> {
  const objects = join(options.folder, 'objects.yaml');
  const configFile = join(options.folder, 'device.yaml');
  writeFileSync(objects, OBJECTS);
  const args = [
    DEVICE,
    'provision',
    '--cloud',
    `https://${SERVER_NAME}`,
    '--code',
    options.code,
    '--config',
    configFile,
    '--objects-from',
    objects,
    '--ca-file',
    options.caFile,
  ];
  const printed = await lab.exec(host, process.execPath, args);
  // Quick reconnections: the restore suite tears the server down under a running controller.
  const document = parseDocument(readFileSync(configFile, 'utf8'));
  document.setIn(['mqtt', 'reconnect_max_ms'], 2000);
  document.setIn(['mqtt', 'keepalive_s'], 5);
  writeFileSync(configFile, document.toString(), { mode: 0o600 });
  return { configFile, ...readProvisioned(printed, configFile) };
}

function readProvisioned(printed: string, configFile: string) {
  const config = parseDocument(readFileSync(configFile, 'utf8')).toJS() as {
    device_id: string;
    command_key: string;
    mqtt: { url: string; username: string; password: string; ca_file?: string };
  };
  const pairingCode = /Pairing code for the customer: (\S+)/.exec(printed)?.[1];
  const gate = /number_id (\d+)/.exec(printed)?.[1];
  if (!pairingCode || !gate) throw new Error(`provision printed no pairing code or gate:\n${printed}`);
  return {
    deviceId: config.device_id,
    pairingCode,
    gateNumberId: Number(gate),
    username: config.mqtt.username,
    password: config.mqtt.password,
    commandKey: config.command_key,
    brokerUrl: config.mqtt.url,
    caFile: config.mqtt.ca_file,
  };
}

/** The daemon, started on the provisioned config. */
export function runController(lab: Lab, host: Host, configFile: string): SpawnedProcess {
  return lab.spawn(host, process.execPath, [DEVICE, 'run', '--config', configFile]);
}

/** How many times the daemon logged an opening. */
export function openingsLogged(daemon: SpawnedProcess): number {
  return daemon.output().match(/command \S+ \(gate\): opened/g)?.length ?? 0;
}

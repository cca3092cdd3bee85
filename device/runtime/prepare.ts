import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DeviceConfig } from '../config.js';
import type { Controller, ControllerDeps } from './controller.js';
import { EarlyConnection } from './early-connection.js';

/** The longest the start waits for the broker to accept the TCP connection before it loads the rest. */
const TRANSPORT_WAIT_MS = 100;

/**
 * The daemon's start up to a controller ready to start (docs/design.md section 12.1), in this order: read the
 * config file, open the connection to the broker (./early-connection.ts), and only then load the config schema
 * and the controller's modules, validate the config and build the controller, while the broker answers. The
 * config is validated before anything uses it beyond that connection, which takes no command. A config file
 * that cannot be read is reported by loadConfig, with the same words as ever. Should the controller's start fail
 * before its session takes the connection over, the daemon exits and the connection ends with it; the broker
 * then publishes the will, offline, which the device is.
 */
export async function prepareController(
  configPath: string,
  deps: ControllerDeps,
): Promise<{ config: DeviceConfig; controller: Controller }> {
  const path = resolve(configPath);
  const source = await readFile(path, 'utf8').catch(() => null);
  const early = source === null || deps.connect ? null : await EarlyConnection.open(source, path);
  await early?.transportOpen(TRANSPORT_WAIT_MS);
  try {
    const [{ loadConfig, parseConfig }, { Controller }] = await Promise.all([
      import('../config.js'),
      import('./controller.js'),
    ]);
    const config = source === null ? loadConfig(path) : parseConfig(source, path);
    const controller = new Controller(config, early ? { ...deps, connect: early.connect } : deps);
    return { config, controller };
  } catch (error) {
    early?.close();
    throw error;
  }
}

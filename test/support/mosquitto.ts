import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { accepts, freePort } from './ports.js';

/**
 * A private Mosquitto for a test file, set up the way cloud/links/controllers/mosquitto/README.md tells operators:
 * the shipped mosquitto.conf (with this test's port and folder), `mosquitto_ctrl dynsec init`, then the
 * shipped setup-dynsec.sh. Listens on 127.0.0.1 only, on a free port.
 */
export const MOSQUITTO_BINARY = '/usr/sbin/mosquitto';
export const mosquittoAvailable = existsSync(MOSQUITTO_BINARY);

const SHIPPED = resolve(import.meta.dirname, '../../cloud/links/controllers/mosquitto');
const run = promisify(execFile);

export interface TestMosquitto {
  port: number;
  /** MQTT_URL for the cloud: `mqtt://cloud:<password>@127.0.0.1:<port>`. */
  cloudUrl: string;
  /** The URL devices use. */
  deviceUrl: string;
  /** Stops the broker (it saves its state) and starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMosquitto(prefix: string): Promise<TestMosquitto> {
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-mosquitto-'));
  const port = await freePort();
  const adminPassword = randomBytes(12).toString('hex');
  const cloudPassword = randomBytes(12).toString('hex');
  const config = join(dir, 'mosquitto.conf');
  writeFileSync(config, renderConfig(readFileSync(join(SHIPPED, 'mosquitto.conf'), 'utf8'), dir, port));
  await run('mosquitto_ctrl', ['dynsec', 'init', join(dir, 'dynamic-security.json'), 'admin', adminPassword]);

  let broker = await launch(config, dir, port);
  await run('sh', [join(SHIPPED, 'setup-dynsec.sh')], {
    env: {
      ...process.env,
      MQTT_HOST: '127.0.0.1',
      MQTT_PORT: String(port),
      DYNSEC_ADMIN_PASSWORD: adminPassword,
      CLOUD_PASSWORD: cloudPassword,
      MQTT_TOPIC_PREFIX: prefix,
    },
  });
  return {
    port,
    cloudUrl: `mqtt://cloud:${cloudPassword}@127.0.0.1:${port}`,
    deviceUrl: `mqtt://127.0.0.1:${port}`,
    async restart() {
      await terminate(broker);
      broker = await launch(config, dir, port);
    },
    async stop() {
      await terminate(broker);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The shipped file with this test's listener (loopback, free port) and folder; everything else as shipped.
 * Started as root, Mosquitto switches to the user `mosquitto`, which cannot read this test's folder; `user`
 * keeps it as whoever runs the tests.
 */
function renderConfig(template: string, dir: string, port: number): string {
  return `user ${userInfo().username}\n${template}`
    .replace(/^listener 1883$/m, `listener ${port} 127.0.0.1`)
    .replace(/^plugin_opt_config_file .*$/m, `plugin_opt_config_file ${join(dir, 'dynamic-security.json')}`)
    .replace(/^persistence_location .*$/m, `persistence_location ${dir}/`);
}

async function launch(config: string, dir: string, port: number): Promise<ChildProcess> {
  const log = openSync(join(dir, 'mosquitto.log'), 'a');
  const child = spawn(MOSQUITTO_BINARY, ['-c', config], { stdio: ['ignore', log, log] });
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) break;
    if (await accepts(port)) return child;
    await new Promise((done) => setTimeout(done, 50));
  }
  child.kill();
  throw new Error(`mosquitto did not start; see ${join(dir, 'mosquitto.log')}`);
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

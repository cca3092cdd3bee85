import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { accepts, freePort } from './ports.js';

/**
 * A private Mosquitto for a test file, set up the way deploy/mosquitto/README.md tells operators:
 * the shipped mosquitto.conf (with this test's port and folder), `mosquitto_ctrl dynsec init`, then the
 * shipped setup-dynsec.sh. Listens on 127.0.0.1 only, on free ports: the plain listener the cloud uses, and with
 * `tls` the TLS listener for devices, with the test's certificate (setup-dynsec.sh then runs over TLS).
 */
export const MOSQUITTO_BINARY = '/usr/sbin/mosquitto';
export const mosquittoAvailable = existsSync(MOSQUITTO_BINARY);

const SHIPPED = resolve(import.meta.dirname, '../../deploy/mosquitto');
const run = promisify(execFile);

export interface MosquittoTls {
  certFile: string;
  keyFile: string;
  /** The CA that signed the certificate, which setup-dynsec.sh is given as MQTT_CAFILE. */
  caFile: string;
}

export interface TestMosquitto {
  port: number;
  /** The TLS listener's port, with `tls`. */
  tlsPort: number | undefined;
  /** MQTT_URL for the cloud: `mqtt://cloud:<password>@127.0.0.1:<port>`. */
  cloudUrl: string;
  /** The cloud's password, for an MQTT_URL of another form (over TLS, say). */
  cloudPassword: string;
  /** The URL devices use: the TLS listener's with `tls`. */
  deviceUrl: string;
  /** SIGHUP: Mosquitto reads its configuration and certificate files again, keeping its sessions. */
  reload(): void;
  /** Stops the broker (it saves its state) and starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMosquitto(
  prefix: string,
  options: { tls?: MosquittoTls } = {},
): Promise<TestMosquitto> {
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-mosquitto-'));
  const port = await freePort();
  const tlsPort = options.tls ? await freePort() : undefined;
  const adminPassword = randomBytes(12).toString('hex');
  const cloudPassword = randomBytes(12).toString('hex');
  const config = join(dir, 'mosquitto.conf');
  const listeners = { port, tls: options.tls && tlsPort ? { ...options.tls, port: tlsPort } : undefined };
  writeFileSync(config, renderConfig(readFileSync(join(SHIPPED, 'mosquitto.conf'), 'utf8'), dir, listeners));
  await run('mosquitto_ctrl', ['dynsec', 'init', join(dir, 'dynamic-security.json'), 'admin', adminPassword]);

  let broker = await launch(config, dir, port);
  await run('sh', [join(SHIPPED, 'setup-dynsec.sh')], {
    env: {
      ...process.env,
      MQTT_HOST: '127.0.0.1',
      MQTT_PORT: String(tlsPort ?? port),
      ...(options.tls ? { MQTT_CAFILE: options.tls.caFile } : {}),
      DYNSEC_ADMIN_PASSWORD: adminPassword,
      CLOUD_PASSWORD: cloudPassword,
      MQTT_TOPIC_PREFIX: prefix,
    },
  });
  return {
    port,
    tlsPort,
    cloudUrl: `mqtt://cloud:${cloudPassword}@127.0.0.1:${port}`,
    cloudPassword,
    deviceUrl: tlsPort ? `mqtts://127.0.0.1:${tlsPort}` : `mqtt://127.0.0.1:${port}`,
    reload: () => broker.kill('SIGHUP'),
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

interface Listeners {
  port: number;
  tls: (MosquittoTls & { port: number }) | undefined;
}

/**
 * The shipped file with this test's listeners (loopback, free ports) and folder; everything else as shipped.
 * Without `tls`, the TLS listener's lines are left out. Started as root, Mosquitto switches to the user
 * `mosquitto`, which cannot read this test's folder; `user` keeps it as whoever runs the tests.
 */
function renderConfig(template: string, dir: string, listeners: Listeners): string {
  const { tls } = listeners;
  const withTls = tls
    ? template
        .replace(/^listener 8883$/m, `listener ${tls.port} 127.0.0.1`)
        .replace(/^certfile .*$/m, `certfile ${tls.certFile}`)
        .replace(/^keyfile .*$/m, `keyfile ${tls.keyFile}`)
    : template.replace(/^(listener 8883|certfile .*|keyfile .*|tls_version .*)\n/gm, '');
  return `user ${userInfo().username}\n${withTls}`
    .replace(/^listener 1883 127\.0\.0\.1$/m, `listener ${listeners.port} 127.0.0.1`)
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

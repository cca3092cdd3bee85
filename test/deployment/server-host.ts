import { execFileSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor } from '../support/wait-for.js';
import type { Host, Lab, SpawnedProcess } from './network.js';

/**
 * The server host of a deployment: a private PostgreSQL (Debian's binaries, its own data folder, as the
 * `postgres` user), Caddy with its internal CA in front of the cloud, and the compiled cloud itself
 * (bin/gatelink-cloud.mjs) with NODE_ENV=production, all inside the server's namespace, where 127.0.0.1 is the
 * server's own loopback.
 */
export const ROOT = resolve(import.meta.dirname, '../..');
export const SERVER_NAME = 'server.test';
export const CADDY = '/usr/bin/caddy';
const CLOUD_PORT = 8080;
export const MQTT_PLAIN_PORT = 1884;
export const MQTT_TLS_PORT = 8883;

/** The newest PostgreSQL under /usr/lib/postgresql, or undefined. */
export function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((version) => existsSync(join(base, version, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

export function serverMissing(): string | undefined {
  if (!existsSync(CADDY)) return `Caddy is not installed at ${CADDY}: apt-get install caddy`;
  if (postgresBin() === undefined)
    return 'PostgreSQL is not installed under /usr/lib/postgresql: apt-get install postgresql';
  try {
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
  } catch {
    return 'there is no postgres user: apt-get install postgresql';
  }
  return undefined;
}

/** As the `postgres` user: setpriv execs in place, so a process's pid is the program's own. */
function asPostgres(bin: string, args: readonly string[]): [string, string[]] {
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', bin, ...args]];
}

export interface Postgres {
  readonly url: string;
  readonly folder: string;
  readonly process: SpawnedProcess;
  stop(): Promise<void>;
}

/** A fresh PostgreSQL cluster in a folder of its own, listening on the host's loopback, with a `gatelink` database. */
export async function startPostgres(lab: Lab, host: Host): Promise<Postgres> {
  const bin = postgresBin()!;
  const folder = mkdtempSync(join(tmpdir(), `glnet-${lab.id}-pg-`));
  chownSync(folder, uid('postgres'), gid('postgres'));
  const data = join(folder, 'data');
  await lab.exec(
    host,
    ...asPostgres(join(bin, 'initdb'), [
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--no-sync',
    ]),
  );
  const server = lab.spawn(
    host,
    ...asPostgres(join(bin, 'postgres'), [
      '-D',
      data,
      '-k',
      folder,
      '-c',
      'listen_addresses=127.0.0.1',
      '-p',
      '5432',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
    ]),
  );
  await server.waitFor(/ready to accept connections/, 'PostgreSQL to start');
  await lab.exec(
    host,
    ...asPostgres(join(bin, 'createdb'), ['-h', '127.0.0.1', '-U', 'postgres', 'gatelink']),
  );
  return {
    url: 'postgres://postgres@127.0.0.1:5432/gatelink',
    folder,
    process: server,
    async stop() {
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}

function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}

export interface Caddy {
  /** Caddy's internal root certificate (PEM), which phones and controllers are made to trust. */
  readonly rootCert: string;
  readonly rootCertFile: string;
  /** Its XDG_DATA_HOME: the internal CA and the certificates, what a backup of the server keeps. */
  readonly dataHome: string;
  readonly process: SpawnedProcess;
  stop(): Promise<void>;
}

/**
 * The operator's Caddyfile (deploy/caddy/Caddyfile) for the server's name, with a certificate from Caddy's
 * internal CA (`tls internal`) where a server on the Internet gets a public one, and the CA kept out of the
 * machine's trust store (skip_install_trust) and no admin endpoint.
 */
export function labCaddyfile(): string {
  const deployed = readFileSync(join(ROOT, 'deploy/caddy/Caddyfile'), 'utf8');
  const site = /^gate\.example\.com \{$/m;
  if (!site.test(deployed))
    throw new Error('deploy/caddy/Caddyfile no longer has its site block "gate.example.com {"');
  const global = '{\n\tadmin off\n\tskip_install_trust\n}\n';
  return global + deployed.replace(site, `${SERVER_NAME} {\n\ttls internal`);
}

/**
 * Caddy on `labCaddyfile`, in front of the cloud on the server's loopback. Its data (the internal CA) lives in
 * `dataHome`, given as XDG_DATA_HOME, so a second Caddy on a copy of the folder serves from the same CA.
 */
export async function startCaddy(lab: Lab, host: Host, dataHome: string): Promise<Caddy> {
  mkdirSync(dataHome, { recursive: true });
  const caddyfile = join(dataHome, 'Caddyfile');
  writeFileSync(caddyfile, labCaddyfile());
  const env = { ...process.env, HOME: dataHome, XDG_DATA_HOME: dataHome, XDG_CONFIG_HOME: dataHome };
  const caddy = lab.spawn(host, CADDY, ['run', '--config', caddyfile, '--adapter', 'caddyfile'], env);
  const rootCertFile = join(dataHome, 'caddy/pki/authorities/local/root.crt');
  const leaf = join(dataHome, 'caddy/certificates/local', SERVER_NAME, `${SERVER_NAME}.crt`);
  await waitFor(
    async () => {
      if (caddy.child.exitCode !== null) throw new Error(`Caddy exited:\n${caddy.output()}`);
      return existsSync(rootCertFile) && existsSync(leaf);
    },
    'Caddy to issue its certificate',
    30_000,
  );
  return {
    rootCert: readFileSync(rootCertFile, 'utf8'),
    rootCertFile,
    dataHome,
    process: caddy,
    stop: () => caddy.stop().then(() => undefined),
  };
}

export interface CloudSettings {
  databaseUrl: string;
  dataDir: string;
  smtpUrl: string;
  /** The broker's certificate for the server's name. */
  brokerCert: { certFile: string; keyFile: string };
}

/** What the cloud is given, as deploy/cloud.env.example has it but for HOST. */
export function cloudEnvironment(settings: CloudSettings): NodeJS.ProcessEnv {
  const {
    DATABASE_URL: _db,
    MQTT_URL: _mqtt,
    OPERATOR_TOKEN: _token,
    BASE_URL: _base,
    ...rest
  } = process.env;
  return {
    ...rest,
    NODE_ENV: 'production',
    BASE_URL: `https://${SERVER_NAME}`,
    PORT: String(CLOUD_PORT),
    // As deploy/cloud.env.example has it: the web on loopback behind Caddy, the plain broker on loopback (where
    // TLS puts it), and the TLS listener on every address (MQTT_TLS_HOST's default) for the controller host.
    HOST: '127.0.0.1',
    MQTT_PORT: String(MQTT_PLAIN_PORT),
    MQTT_TLS_PORT: String(MQTT_TLS_PORT),
    MQTT_TLS_CERT_FILE: settings.brokerCert.certFile,
    MQTT_TLS_KEY_FILE: settings.brokerCert.keyFile,
    MQTT_PUBLIC_URL: `mqtts://${SERVER_NAME}:${MQTT_TLS_PORT}`,
    DATABASE_URL: settings.databaseUrl,
    GATELINK_DATA_DIR: settings.dataDir,
    SMTP_URL: settings.smtpUrl,
    TRUST_PROXY: 'loopback',
    LOG_LEVEL: 'info',
  };
}

/** `gatelink-admin <args>` in the server's namespace with the cloud's environment. */
export function admin(
  lab: Lab,
  host: Host,
  settings: CloudSettings,
  args: readonly string[],
): Promise<string> {
  return lab.exec(
    host,
    process.execPath,
    [join(ROOT, 'bin/gatelink-admin.mjs'), ...args],
    cloudEnvironment(settings),
  );
}

/**
 * The compiled cloud, listening once it prints its address. Production never makes its keys at start: a new
 * server's come from `gatelink-admin keys init`, a restored one's from its backup.
 */
export async function startCloud(lab: Lab, host: Host, settings: CloudSettings): Promise<SpawnedProcess> {
  mkdirSync(settings.dataDir, { recursive: true });
  if (!existsSync(join(settings.dataDir, 'signing-key.pem')))
    await admin(lab, host, settings, ['keys', 'init']);
  const cloud = lab.spawn(
    host,
    process.execPath,
    [join(ROOT, 'bin/gatelink-cloud.mjs')],
    cloudEnvironment(settings),
  );
  await cloud.waitFor(/MQTT for devices: \S+/, 'the cloud to listen');
  return cloud;
}

/** The operator token the cloud made into its data folder. */
export function operatorToken(dataDir: string): string {
  return readFileSync(join(dataDir, 'operator-token'), 'utf8').trim();
}

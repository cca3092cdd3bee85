import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { accepts, freePort } from '../support/ports.js';
import { makeTestCa, type TestCa } from '../support/test-ca.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The shipped proxy configurations (deploy/caddy/Caddyfile, deploy/nginx/gatelink.conf), run for real in front
 * of a cloud with TRUST_PROXY=loopback, with only their name, ports and certificate changed: an https call
 * through each reaches the cloud, the cloud counts the client's own address (not the proxy's, nor one the
 * client claims), and a page's links are https.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const CADDY = '/usr/bin/caddy';
const NGINX = '/usr/sbin/nginx';
/** The client calls from another loopback address than the proxy's, so the two can be told apart. */
const CLIENT_ADDRESS = '127.0.0.2';

let database: TestDatabase;
let cloud: TestCloud;
let ca: TestCa;
let cert: { certFile: string; keyFile: string };
const proxyPort = await freePort();
const logLines: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    env: { TRUST_PROXY: 'loopback', BASE_URL: `https://localhost:${proxyPort}`, LOG_LEVEL: 'debug' },
    logStream: { write: (line) => logLines.push(...line.split('\n').filter(Boolean)) },
  });
  ca = await makeTestCa();
  cert = await ca.issue(['localhost']);
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  ca?.remove();
});

/** Where the cloud listens; its base URL is the proxy's. */
function cloudPort(): number {
  const address = cloud.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the cloud does not listen');
  return address.port;
}

/** GET over https from CLIENT_ADDRESS, claiming another client address in X-Forwarded-For. */
function httpsGet(path: string): Promise<{ status: number; body: string; requestId: string }> {
  return new Promise((done, fail) => {
    const call = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: proxyPort,
        path,
        ca: ca.cert,
        localAddress: CLIENT_ADDRESS,
        headers: { host: `localhost:${proxyPort}`, 'x-forwarded-for': '203.0.113.9' },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () =>
          done({
            status: response.statusCode ?? 0,
            body,
            requestId: String(response.headers['x-request-id']),
          }),
        );
      },
    );
    call.on('error', fail);
    call.end();
  });
}

/** The address the cloud logged for the call it answered with this request id. */
function loggedClientAddress(requestId: string): string | undefined {
  for (const line of logLines) {
    const entry = JSON.parse(line) as { reqId?: string; req?: { remoteAddress?: string } };
    if (entry.reqId === requestId && entry.req?.remoteAddress) return entry.req.remoteAddress;
  }
  return undefined;
}

async function expectServedThroughProxy(): Promise<void> {
  const health = await httpsGet('/healthz');
  expect(health.status).toBe(200);
  expect(JSON.parse(health.body)).toEqual({ ok: 1 });
  expect(loggedClientAddress(health.requestId)).toBe(CLIENT_ADDRESS);
  const page = await httpsGet('/api/reference');
  expect(page.status).toBe(200);
  expect(page.body).toContain(`https://localhost:${proxyPort}`);
  expect(page.body).not.toMatch(/(?:href|src|action)="http:\/\//);
}

async function runUntilStopped(
  child: ChildProcess,
  what: string,
  log: () => string,
): Promise<() => Promise<void>> {
  const exited = once(child, 'exit');
  let early: string | undefined;
  void exited.then(([code]) => {
    early = `${what} exited with ${code}:\n${log()}`;
  });
  await waitFor(async () => {
    if (early) throw new Error(early);
    return accepts(proxyPort);
  }, `${what} to listen on ${proxyPort}`);
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
}

describe.skipIf(!existsSync(CADDY))('Caddy in front of the cloud (deploy/caddy/Caddyfile)', () => {
  it('serves https calls to the cloud, which sees the client address and writes https links', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'gatelink-caddy-'));
    const shipped = readFileSync(join(ROOT, 'deploy/caddy/Caddyfile'), 'utf8');
    const site = shipped
      .replace(
        /^gate\.example\.com \{$/m,
        `https://localhost:${proxyPort} {\n\ttls ${cert.certFile} ${cert.keyFile}`,
      )
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${cloudPort()}`);
    const global = `{\n\tadmin off\n\tdefault_bind 127.0.0.1\n\thttp_port ${await freePort()}\n\thttps_port ${proxyPort}\n\tauto_https disable_redirects\n\tskip_install_trust\n\tstorage file_system ${folder}/storage\n}\n`;
    writeFileSync(join(folder, 'Caddyfile'), global + site);
    let output = '';
    const child = spawn(CADDY, ['run', '--config', join(folder, 'Caddyfile'), '--adapter', 'caddyfile'], {
      env: { ...process.env, HOME: folder, XDG_DATA_HOME: folder, XDG_CONFIG_HOME: folder },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const stop = await runUntilStopped(child, 'caddy', () => output);
    try {
      await expectServedThroughProxy();
    } finally {
      await stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!existsSync(NGINX))('nginx in front of the cloud (deploy/nginx/gatelink.conf)', () => {
  it('serves https calls to the cloud, which sees the client address and writes https links', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'gatelink-nginx-'));
    const shipped = readFileSync(join(ROOT, 'deploy/nginx/gatelink.conf'), 'utf8');
    const site = shipped
      .replace(/^\s*listen \[::\].*$/gm, '')
      .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${await freePort()};`)
      .replace(/^(\s*)listen 443 /m, `$1listen 127.0.0.1:${proxyPort} `)
      .replaceAll('gate.example.com', 'localhost')
      .replace(/^(\s*)ssl_certificate .*$/m, `$1ssl_certificate ${cert.certFile};`)
      .replace(/^(\s*)ssl_certificate_key .*$/m, `$1ssl_certificate_key ${cert.keyFile};`)
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${cloudPort()}`);
    const temp = (name: string) => `${name}_temp_path ${folder}/${name};`;
    const main = [
      'daemon off;',
      `pid ${folder}/nginx.pid;`,
      `error_log ${folder}/error.log warn;`,
      'events {}',
      'http {',
      `  access_log off;`,
      `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
      site,
      '}',
    ].join('\n');
    writeFileSync(join(folder, 'nginx.conf'), main);
    let output = '';
    const child = spawn(
      NGINX,
      ['-p', folder, '-c', join(folder, 'nginx.conf'), '-e', join(folder, 'error.log')],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const stop = await runUntilStopped(child, 'nginx', () =>
      [
        output,
        existsSync(join(folder, 'error.log')) ? readFileSync(join(folder, 'error.log'), 'utf8') : '',
      ].join('\n'),
    );
    try {
      await expectServedThroughProxy();
    } finally {
      await stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

if (!existsSync(CADDY)) console.warn('reverse-proxy: Caddy skipped, not installed (apt-get install caddy)');
if (!existsSync(NGINX)) console.warn('reverse-proxy: nginx skipped, not installed (apt-get install nginx)');

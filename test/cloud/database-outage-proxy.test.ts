import { createServer, type Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../cloud/foundation/db/database.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * PostgreSQL cut off from a running cloud (cloud/README.md, "Errors"): calls and pages answer 503 `unavailable`
 * with Retry-After while it lasts, the log has one line for the outage, and calls work again once it is back.
 * Needs PostgreSQL: DATABASE_URL, else the local server at postgres://postgres@127.0.0.1:5432/postgres.
 */
/** A line of the cloud's JSON log: pino's level 50 is error, 40 warn. */
interface LogLine {
  level: number;
  msg: string;
}

const LOCAL = 'postgres://postgres@127.0.0.1:5432/postgres';
const serverUrl = process.env.DATABASE_URL ?? ((await reachable(LOCAL)) ? LOCAL : undefined);

async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = new Socket();
    socket.once('connect', () => done(socket.destroy() !== undefined));
    socket.once('error', () => done(false));
    socket.connect(Number(port), hostname);
  });
}

/** A TCP proxy on a port of its own that can be cut (connections dropped, new ones refused) and restored. */
class CuttableProxy {
  #server: Server | null = null;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(readonly target: { host: string; port: number }) {}

  async listen(): Promise<void> {
    const server = createServer((client) => {
      const upstream = new Socket();
      upstream.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((done) => server.listen(this.port, '127.0.0.1', done));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((done) => server?.close(() => done()) ?? done());
  }
}

describe.skipIf(!serverUrl)('PostgreSQL out of reach', { timeout: 60_000 }, () => {
  let database: TestDatabase;
  let proxy: CuttableProxy;
  let handle: DatabaseHandle;
  let cloud: TestCloud;
  const entries: LogLine[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(serverUrl);
    const url = new URL(database.url!);
    proxy = new CuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.listen();
    url.host = `127.0.0.1:${proxy.port}`;
    handle = await openDatabase({ url: url.toString() });
    cloud = await startTestCloud({
      database: handle,
      env: { LOG_LEVEL: 'warn' },
      logStream: { write: (line) => entries.push(JSON.parse(line) as LogLine) },
    });
  });

  afterAll(async () => {
    await cloud?.stop();
    await handle?.close();
    await database?.close();
  });

  it('answers 503 unavailable with Retry-After to calls and pages, logs the outage once, and recovers', async () => {
    const company = await secretCompany(cloud, 'Outage Ltd');
    await proxy.cut();

    for (let i = 0; i < 10; i += 1) {
      const answer = await cloud.call('status', { ...company, code: 'ABCD-EFGH' });
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(answer.body.error).toBe('unavailable');
      expect(answer.headers['retry-after']).toBe('5');
    }
    const page = await cloud.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html', cookie: `gatelink-session=${'a'.repeat(43)}` },
    });
    expect(page.statusCode).toBe(503);
    expect(page.headers['retry-after']).toBe('5');
    const ready = await cloud.app.inject({ method: 'GET', url: '/readyz' });
    expect(JSON.parse(ready.body)).toMatchObject({ ok: 0, not_ready: expect.arrayContaining(['database']) });
    expect(entries.filter((entry) => entry.level >= 50).map((entry) => entry.msg)).toEqual([
      'database unreachable; calls answer 503 unavailable and failures are counted until it answers again',
    ]);

    await proxy.listen();
    const again = await cloud.call('status', { ...company, code: 'ABCD-EFGH' });
    expect(again.status).not.toBe(503);
    await cloud.app.inject({ method: 'GET', url: '/readyz' });
    expect(entries.map((entry) => entry.msg)).toContainEqual(
      expect.stringMatching(/^database reachable again after 11 failures over \d+ s$/),
    );
  });
});

if (!serverUrl) {
  process.stderr.write(
    'database-outage-proxy: skipped, no PostgreSQL (set DATABASE_URL or run one at 127.0.0.1:5432)\n',
  );
}

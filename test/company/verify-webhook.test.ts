import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { runCompanyTool } from '../../company/tool.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { callbackCompany, enqueuePings, setCallback } from '../support/event-company.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `gatelink-company verify-webhook` (docs/design.md section 11.2) on deliveries the cloud really made: one saved
 * as JSON from what a callback received, one as the raw HTTP request a listening socket captured (as `nc -l`
 * saves it). Each is valid as saved and invalid once a byte of its body changed.
 */
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let capture: Server;
let folder: string;
let key: string;
let jsonFile: string;
let rawFile: string;
let sentAt: number;
const captured: Buffer[] = [];

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'gatelink-verify-webhook-'));
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  key = (JSON.parse(published.body) as { key: string }).key;
  receiver = new WebhookReceiver();
  await receiver.start(key);
  const companyId = await callbackCompany(cloud.ctx, 'Hooks Ltd', receiver.url);
  const deliver = () => deliverDue(cloud.ctx, { allowPrivateAddresses: true, timeoutMs: 5000 });

  await enqueuePings(cloud.ctx, companyId);
  await deliver();
  const got = receiver.received[0]!;
  const headers = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(got.headers[name])]),
  );
  sentAt = Number(headers['webhook-timestamp']);
  jsonFile = join(folder, 'delivery.json');
  writeFileSync(jsonFile, JSON.stringify({ headers, body: got.body }, null, 2));

  capture = await captureServer();
  const port = (capture.address() as { port: number }).port;
  await setCallback(cloud.ctx, companyId, `http://127.0.0.1:${port}/hooks/gatelink`);
  await enqueuePings(cloud.ctx, companyId);
  await deliver();
  rawFile = join(folder, 'delivery.http');
  writeFileSync(rawFile, Buffer.concat(captured));
});

afterAll(async () => {
  await receiver?.stop();
  await new Promise((resolve) => (capture ? capture.close(resolve) : resolve(undefined)));
  await cloud?.stop();
  await database?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A listening socket that keeps every byte of a request, as `nc -l` does, and answers 204. */
async function captureServer(): Promise<Server> {
  const server = createServer((socket) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      const end = bytes.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(bytes.toString('latin1'))?.[1] ?? 0);
      if (end >= 0 && bytes.length >= end + 4 + length) {
        captured.push(bytes);
        socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

async function tool(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCompanyTool(argv, { out: (t) => (out += t), err: (t) => (err += t) }, {});
  return { code, out, err };
}

/** A copy of `file` with the delivery's "ping" turned into "pong": the same length, another body. */
function tampered(file: string): string {
  const copy = `${file}.tampered`;
  const text = readFileSync(file, 'utf8');
  const changed = text
    .replace('"type":"ping"', '"type":"pong"')
    .replace('\\"type\\":\\"ping\\"', '\\"type\\":\\"pong\\"');
  expect(changed).not.toBe(text);
  writeFileSync(copy, changed);
  return copy;
}

describe('verify-webhook', () => {
  it('a delivery saved as JSON is valid, with the key fetched from the service', async () => {
    const run = await tool(
      'verify-webhook',
      '--file',
      jsonFile,
      '--url',
      cloud.baseUrl,
      '--now',
      String(sentAt),
    );
    expect(run.code, run.err).toBe(0);
    const id = receiver.received[0]!.id;
    expect(run.out).toMatch(
      new RegExp(`^valid: ping event ${id}, of \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\n$`),
    );
  });

  it('a delivery captured as the raw HTTP request is valid, with the key given', async () => {
    expect(readFileSync(rawFile, 'latin1')).toMatch(/^POST \/hooks\/gatelink HTTP\/1\.1\r\n/);
    const run = await tool('verify-webhook', '--file', rawFile, '--key', key);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^valid: ping event [0-9a-f-]{36}, of /);
    // As an editor may save it: LF line endings in the headers.
    const lf = join(folder, 'delivery-lf.http');
    const bytes = readFileSync(rawFile);
    const end = bytes.indexOf('\r\n\r\n');
    writeFileSync(
      lf,
      Buffer.concat([
        Buffer.from(bytes.subarray(0, end).toString('latin1').replaceAll('\r\n', '\n')),
        Buffer.from('\n\n'),
        bytes.subarray(end + 4),
      ]),
    );
    expect((await tool('verify-webhook', '--file', lf, '--key', key)).code).toBe(0);
  });

  it('a tampered delivery is invalid in either form, and exits 1', async () => {
    for (const file of [tampered(jsonFile), tampered(rawFile)]) {
      const run = await tool('verify-webhook', '--file', file, '--key', key, '--now', String(sentAt));
      expect(run.code).toBe(1);
      expect(run.out).toBe(
        'invalid: No v1a signature in webhook-signature verifies with the key for this body.\n',
      );
    }
  });

  it('an old delivery is refused unless checked at the time it arrived, or with a longer --max-age', async () => {
    const later = String(sentAt + 3600);
    const old = await tool('verify-webhook', '--file', jsonFile, '--key', key, '--now', later);
    expect(old.code).toBe(1);
    expect(old.out).toContain('invalid: The delivery is more than 300 s old.');
    expect(old.out).toContain('give the time it arrived: --now <its webhook-timestamp>');
    const iso = new Date(sentAt * 1000).toISOString();
    expect((await tool('verify-webhook', '--file', jsonFile, '--key', key, '--now', iso)).code).toBe(0);
    expect(
      (await tool('verify-webhook', '--file', jsonFile, '--key', key, '--now', later, '--max-age', '3600'))
        .code,
    ).toBe(0);
  });

  it('--json prints one object, valid or not', async () => {
    const valid = await tool('verify-webhook', '--file', rawFile, '--key', key, '--json');
    expect(JSON.parse(valid.out)).toMatchObject({
      valid: true,
      type: 'ping',
      id: expect.any(String),
      event: { type: 'ping', data: expect.any(Object) },
    });
    const invalid = await tool('verify-webhook', '--file', tampered(rawFile), '--key', key, '--json');
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.out)).toEqual({
      valid: false,
      error: 'bad_signature',
      message: expect.any(String),
      request_id: null,
    });
  });

  it('says what is wrong with a file or the options', async () => {
    const notDelivery = join(folder, 'notes.txt');
    writeFileSync(notDelivery, 'hello\n');
    expect((await tool('verify-webhook', '--file', notDelivery, '--key', key)).err).toContain(
      'is neither a saved delivery in JSON nor an HTTP request',
    );
    const cut = join(folder, 'cut.http');
    writeFileSync(cut, readFileSync(rawFile).subarray(0, -5));
    expect((await tool('verify-webhook', '--file', cut, '--key', key)).err).toContain('the capture is cut');
    const wrongJson = join(folder, 'wrong.json');
    writeFileSync(wrongJson, '{"body": 1}');
    expect((await tool('verify-webhook', '--file', wrongJson, '--key', key)).err).toContain(
      'the JSON form is {"headers": {...}, "body": "<the body as received>"}',
    );
    expect((await tool('verify-webhook', '--file', jsonFile)).err).toContain(
      'the service address is missing',
    );
    expect((await tool('verify-webhook', '--file', jsonFile, '--key', key, '--now', 'soon')).err).toContain(
      '--now soon is neither Unix seconds nor an ISO 8601 time',
    );
    const badKey = await tool('verify-webhook', '--file', jsonFile, '--key', 'AAAA', '--now', String(sentAt));
    expect(badKey.code).toBe(1);
    expect(badKey.out).toContain('invalid: The public key given is not usable');
  });
});

import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { removeBarrier, replaceController } from '../../cloud/rules/devices/device-lifecycle.js';
import { applyAck } from '../../cloud/rules/journal/journal.js';
import { checkChain, checkChains } from '../../cloud/rules/receipts/chain-check.js';
import { RECEIPTS_TAG } from '../../cloud/rules/receipts/receipts-export.js';
import { sealChainBatch, sealFinalEntries } from '../../cloud/rules/receipts/sealing.js';
import { SigningKey, strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import { signPositionReport } from '../../shared/protocol/positions.js';
import { canonicalJson, signAck, signedBytes, verifySignature } from '../../shared/protocol/signing.js';
import {
  type JournalBarrier,
  journalBarrier,
  type KeyHolder,
  keyHolder,
} from '../support/barrier-journal.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newDeviceId } from '../support/fake-device.js';
import { runProgram } from '../support/program-run.js';

/**
 * The journal's receipts (docs/design.md section 5.3, docs/receipts.md): entries sealed once final, one chain
 * per barrier and owner that concurrent sealers never fork, an export that the documented Python verifier and
 * a verifier written here both accept, and every kind of tampering found, by them and by the cloud's own check.
 */
let database: TestDatabase;
let cloud: TestCloud;
let clock: FakeClock;
let customerId: number;
let client: BrowserClient;
let tmp: string;

const HOUR = 3_600_000;
const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');
const VERIFIER_MARK = '<!-- verify_receipts.py';

beforeAll(async () => {
  database = await createTestDatabase();
  clock = new FakeClock(Date.UTC(2026, 2, 2, 8, 0, 0));
  cloud = await startTestCloud({ database, clock });
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Rita Receipts' })).id;
  client = await BrowserClient.signedIn(cloud, customerId);
  tmp = mkdtempSync(join(tmpdir(), 'gatelink-receipts-'));
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

interface Gate extends JournalBarrier {
  key: SigningKey;
  holder: KeyHolder;
}

/** A barrier of `owner` whose controller has a real key, and a company holding a key on it. */
async function gate(owner = customerId, name = 'North gate', labels?: string[]): Promise<Gate> {
  const barrier = await journalBarrier(cloud.ctx, owner, name, labels);
  const key = SigningKey.generate();
  await cloud.ctx.db
    .updateTable('devices')
    .set({ public_key: key.publicKey.base64, provisioned_at: clock.now() })
    .where('id', '=', barrier.deviceId)
    .execute();
  const holder = await keyHolder(cloud.ctx, { customerId: owner, barrier, name: `Cleaners of ${name}` });
  return { ...barrier, key, holder };
}

interface EntrySpec {
  outcome?: 'opened' | 'device_timeout' | 'device_offline' | 'device_error' | 'revoked' | null;
  actor?: string;
  object?: number;
  /** The controller that signed: the gate's own unless told. */
  signer?: { deviceId: string; key: SigningKey };
  gate?: { opened?: boolean; closed?: boolean; notMoved?: boolean };
}

/** One journal entry as the opening and the position reports leave it, with real signed messages. */
async function entry(on: Gate, spec: EntrySpec = {}): Promise<number> {
  const at = clock.now();
  const outcome = spec.outcome === undefined ? 'opened' : spec.outcome;
  const signer = spec.signer ?? { deviceId: on.deviceId, key: on.key };
  const acked = outcome === 'opened' || outcome === 'device_error';
  const ack = acked
    ? signAck(signer.key, {
        v: 1,
        command_id: randomUUID(),
        device_id: signer.deviceId,
        outcome: outcome === 'opened' ? 'opened' : 'failed',
        ...(outcome === 'opened' ? {} : { reason: 'relay_fault' as const }),
        received_at: at.getTime() + 40,
        finished_at: at.getTime() + 700,
      })
    : null;
  const reports = [];
  const report = (position: 'open' | 'closed', afterMs: number) =>
    signPositionReport(signer.key, {
      v: 1,
      type: 'position',
      id: randomUUID(),
      device_id: signer.deviceId,
      object: 'out0',
      position,
      changed_at: at.getTime() + afterMs,
      at: at.getTime() + afterMs + 5,
    });
  if (spec.gate?.opened) reports.push(report('open', 2_500));
  if (spec.gate?.closed) reports.push(report('closed', 42_000));
  const row = await cloud.ctx.db
    .insertInto('journal')
    .values({
      at,
      device_id: on.deviceId,
      object_id: on.objects[spec.object ?? 0]!.id,
      company_id: on.holder.companyId,
      key_id: on.holder.keyRef,
      actor: spec.actor ?? 'Anna, shift 2',
      outcome,
      detail: outcome === 'device_error' ? 'relay_fault' : null,
      command_id: acked ? randomUUID() : null,
      acked_at: acked ? new Date(at.getTime() + 700) : null,
      ack: ack ? JSON.stringify(ack) : null,
      gate_opened_at: spec.gate?.opened ? new Date(at.getTime() + 2_500) : null,
      gate_closed_at: spec.gate?.closed ? new Date(at.getTime() + 42_000) : null,
      gate_not_moved_at: spec.gate?.notMoved ? new Date(at.getTime() + 31_000) : null,
      gate_reports: reports.length > 0 ? JSON.stringify(reports) : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function sealed(ids: number[]): Promise<number[]> {
  const rows = await cloud.ctx.db
    .selectFrom('journal')
    .select('id')
    .where('id', 'in', ids)
    .where('chain_seq', 'is not', null)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

async function withSensor(on: Gate, object = 0): Promise<void> {
  await cloud.ctx.db
    .updateTable('device_objects')
    .set({ has_sensor: true })
    .where('id', '=', on.objects[object]!.id)
    .execute();
}

interface Export {
  text: string;
  header: Record<string, unknown> & {
    head: { seq: number; hash: string };
    device_keys: Record<string, string>;
  };
  lines: { seq: number; prev: string; hash: string; entry: { id: number; actor: string } }[];
}

async function exportOf(on: { deviceId: string }, as = client): Promise<Export> {
  const answer = await as.get(`/barriers/${on.deviceId}/journal.receipts.jsonl`);
  expect(answer.status, answer.html.slice(0, 300)).toBe(200);
  expect(answer.headers['content-type']).toBe('application/x-ndjson');
  expect(answer.headers['content-disposition']).toMatch(
    new RegExp(`^attachment; filename="receipts-${on.deviceId}-\\d{4}-\\d{2}-\\d{2}\\.jsonl"$`),
  );
  const [first, ...rest] = answer.html.split('\n').filter((line) => line !== '');
  return { text: answer.html, header: JSON.parse(first!), lines: rest.map((line) => JSON.parse(line)) };
}

/**
 * A verifier written from docs/receipts.md alone, with Node's own crypto for the hashes: what the Python one
 * checks, in the same order. Returns the count, or the first break as the Python verifier words it.
 */
function verifyHere(file: Export): { ok: true; count: number } | { ok: false; message: string } {
  const header = file.header;
  const { sig, ...unsigned } = header;
  const service = strictPublicKeyFromBase64(String(header.service_key));
  if (!verifySignature(service, signedBytes(RECEIPTS_TAG, unsigned as never), String(sig))) {
    return { ok: false, message: 'header signature' };
  }
  let seq = 0;
  let prev = String(header.genesis);
  for (const line of file.lines) {
    const fail = (why: string) => ({
      ok: false as const,
      message: `broken at entry ${line.entry.id}: ${why}`,
    });
    if (line.seq !== seq + 1) return fail('sequence');
    if (line.prev !== prev) return fail('prev');
    const hash = createHash('sha256')
      .update(prev + canonicalJson(line.entry as never), 'utf8')
      .digest('hex');
    if (hash !== line.hash) return fail('hash');
    const entry = line.entry as unknown as {
      ack: Record<string, string> | null;
      reports: Record<string, string>[];
    };
    const signed = [
      ...(entry.ack ? [['gatelink/ack/v1', entry.ack] as const] : []),
      ...entry.reports.map((report) => ['gatelink/position/v1', report] as const),
    ];
    for (const [tag, message] of signed) {
      const key = header.device_keys[String(message.device_id)];
      if (
        !key ||
        !verifySignature(strictPublicKeyFromBase64(key), signedBytes(tag, message), String(message.sig))
      ) {
        return fail('signature');
      }
    }
    seq = line.seq;
    prev = line.hash;
  }
  if (seq !== header.head.seq || prev !== header.head.hash) return { ok: false, message: 'head' };
  return { ok: true, count: seq };
}

/** The verifier as docs/receipts.md prints it, extracted from the document itself. */
function documentedVerifier(): string {
  const doc = readFileSync(new URL('../../docs/receipts.md', import.meta.url), 'utf8');
  const after = doc.slice(doc.indexOf(VERIFIER_MARK));
  const match = /```python\n([\s\S]*?)```/.exec(after);
  if (!match) throw new Error('docs/receipts.md has no verifier block');
  return match[1]!;
}

const python = spawnSync('python3', ['-c', 'import cryptography'], { encoding: 'utf8' });
const pythonReady = python.status === 0;
if (!pythonReady) {
  console.warn(
    `the Python verifier is not run: python3 with cryptography is not available (${python.stderr})`,
  );
}

/** Runs the documented verifier on the export (and an earlier one); exit status and what it printed. */
function runPython(file: Export, earlier?: Export): { status: number | null; output: string } {
  const script = join(tmp, 'verify_receipts.py');
  writeFileSync(script, documentedVerifier());
  const path = join(tmp, `${randomUUID()}.jsonl`);
  writeFileSync(path, file.text);
  const args = [script, path];
  if (earlier) {
    const before = join(tmp, `${randomUUID()}.jsonl`);
    writeFileSync(before, earlier.text);
    args.push(before);
  }
  const run = spawnSync('python3', args, { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

function expectIntact(file: Export, count: number): void {
  expect(verifyHere(file)).toEqual({ ok: true, count });
  if (!pythonReady) return;
  const run = runPython(file);
  expect(run.output).toBe(`${count} entries intact, head ${file.header.head.hash}\n`);
  expect(run.status).toBe(0);
}

function expectBrokenAt(file: Export, entryId: number): void {
  const here = verifyHere(file);
  expect(here.ok).toBe(false);
  if (!here.ok) expect(here.message).toContain(`broken at entry ${entryId}:`);
  if (!pythonReady) return;
  const run = runPython(file);
  expect(run.status).toBe(1);
  expect(run.output).toContain(`broken at entry ${entryId} `);
}

describe('sealing', () => {
  it('seals a refusal, an offline controller and an opening without a sensor at once, and never an entry in flight', async () => {
    const on = await gate();
    const refused = await entry(on, { outcome: 'revoked' });
    const offline = await entry(on, { outcome: 'device_offline' });
    const failed = await entry(on, { outcome: 'device_error' });
    const opened = await entry(on);
    const pending = await entry(on, { outcome: null });
    const timedOut = await entry(on, { outcome: 'device_timeout' });
    await sealFinalEntries(cloud.ctx);
    expect(await sealed([refused, offline, failed, opened, pending, timedOut])).toEqual([
      refused,
      offline,
      failed,
      opened,
    ]);
    clock.advance(25 * HOUR);
    await sealFinalEntries(cloud.ctx);
    expect(await sealed([pending, timedOut])).toEqual([timedOut]);
  });

  it('a late acknowledgement of an entry already sealed as timed out changes nothing', async () => {
    const on = await gate();
    const timedOut = await entry(on, { outcome: 'device_timeout' });
    const commandId = randomUUID();
    await cloud.ctx.db
      .updateTable('journal')
      .set({ command_id: commandId })
      .where('id', '=', timedOut)
      .execute();
    clock.advance(25 * HOUR);
    await sealFinalEntries(cloud.ctx);
    expect(await sealed([timedOut])).toEqual([timedOut]);
    const late = signAck(on.key, {
      v: 1,
      command_id: commandId,
      device_id: on.deviceId,
      outcome: 'opened',
      received_at: clock.now().getTime(),
      finished_at: clock.now().getTime() + 500,
    });
    expect(await applyAck(cloud.ctx, late)).toBe(false);
    const row = await cloud.ctx.db
      .selectFrom('journal')
      .select(['outcome', 'ack'])
      .where('id', '=', timedOut)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ outcome: 'device_timeout', ack: null });
    const file = await exportOf(on);
    expect(file.lines.map((line) => line.entry.id)).toEqual([timedOut]);
    expectIntact(file, 1);
  });

  it('waits for the gate of an opening with a sensor: closed, did not move, or a day', async () => {
    const on = await gate();
    await withSensor(on);
    const watched = await entry(on, { gate: { opened: true } });
    const closed = await entry(on, { gate: { opened: true, closed: true } });
    const stuck = await entry(on, { gate: { notMoved: true } });
    await sealFinalEntries(cloud.ctx);
    expect(await sealed([watched, closed, stuck])).toEqual([closed, stuck]);
    clock.advance(23 * HOUR);
    await sealFinalEntries(cloud.ctx);
    expect(await sealed([watched])).toEqual([]);
    clock.advance(2 * HOUR);
    await sealFinalEntries(cloud.ctx);
    expect(await sealed([watched])).toEqual([watched]);
    // Sealed in the order they became final: the entry watched for a day comes after those sealed before it.
    const file = await exportOf(on);
    expect(file.lines.map((line) => line.entry.id)).toEqual([closed, stuck, watched]);
    expectIntact(file, 3);
  });

  it('two sealers at once seal each entry once, in one chain without a fork', async () => {
    const on = await gate();
    const ids: number[] = [];
    for (let i = 0; i < 120; i++) ids.push(await entry(on, { actor: `Driver ${i}` }));
    const chain = { deviceId: on.deviceId, customerId };
    await Promise.all([
      sealChainBatch(cloud.ctx, chain, 7),
      sealChainBatch(cloud.ctx, chain, 7),
      sealFinalEntries(cloud.ctx, { batchSize: 10 }),
      sealFinalEntries(cloud.ctx, { batchSize: 13 }),
    ]);
    const file = await exportOf(on);
    expect(file.lines.map((line) => line.seq)).toEqual(ids.map((_, i) => i + 1));
    expect(new Set(file.lines.map((line) => line.entry.id))).toEqual(new Set(ids));
    expectIntact(file, 120);
  });
});

describe('the export', () => {
  let on: Gate;
  let ids: number[];

  beforeAll(async () => {
    on = await gate(customerId, 'Gate “Süd”');
    await withSensor(on, 1);
    ids = [
      await entry(on, { actor: 'Zoë, shift 2 — night' }),
      await entry(on, { outcome: 'revoked' }),
      await entry(on, { object: 1, gate: { opened: true, closed: true } }),
      await entry(on, { outcome: 'device_error' }),
    ];
    await entry(on, { outcome: null });
    await sealFinalEntries(cloud.ctx);
  });

  it('is a signed header and the sealed entries in chain order, which both verifiers accept', async () => {
    const file = await exportOf(on);
    expect(file.header).toMatchObject({
      format: 'gatelink-journal-receipts/v1',
      barrier: { id: on.deviceId, name: 'Gate “Süd”' },
      device_keys: { [on.deviceId]: on.key.publicKey.base64 },
      head: { seq: 4 },
      unsealed: 1,
      service_key: cloud.ctx.serviceKey.publicKey.base64,
    });
    expect(file.lines.map((line) => line.entry.id)).toEqual(ids);
    expect(file.lines[0]!.entry).toMatchObject({
      actor: 'Zoë, shift 2 — night',
      company: { id: on.holder.companyId, name: 'Cleaners of Gate “Süd”' },
      key_ref: on.holder.keyRef,
      outcome: 'opened',
      ack: { device_id: on.deviceId, outcome: 'opened' },
    });
    expect((file.lines[2]!.entry as unknown as { reports: unknown[] }).reports).toHaveLength(2);
    expectIntact(file, 4);
  });

  it('is checked by the verifier the documents show, and served as it is there', async () => {
    expect(documentedVerifier()).toBe(
      readFileSync(new URL('../../cloud/faces/customer-pages/verify_receipts.py', import.meta.url), 'utf8'),
    );
    const served = await client.get('/receipts/verify_receipts.py');
    expect(served.html).toBe(documentedVerifier());
    const help = await client.get('/receipts');
    expect(visibleText(help.html)).toContain('python3 verify_receipts.py receipts.jsonl');
    const journal = await client.get(`/barriers/${on.deviceId}/journal`);
    expect(journal.html).toContain(`/barriers/${on.deviceId}/journal.receipts.jsonl`);
    expect(journal.html).toContain('href="/receipts"');
  });

  it('a later export extends an earlier one, and a rebuilt chain does not', async () => {
    const earlier = await exportOf(on);
    await entry(on, { outcome: 'revoked' });
    await sealFinalEntries(cloud.ctx);
    const later = await exportOf(on);
    expectIntact(later, 5);
    if (!pythonReady) return;
    expect(runPython(later, earlier).status).toBe(0);
    // The operator rebuilds the chain without an entry: intact on its own, but no longer the earlier one's.
    const rebuilt = rebuildWithout(later, ids[1]!);
    expect(verifyHere(rebuilt).ok).toBe(true);
    const run = runPython(rebuilt, earlier);
    expect(run.status).toBe(1);
    expect(run.output).toContain('broken at entry');
  });

  it('answers 404 for a barrier that is not the customer’s, like one that does not exist', async () => {
    const other = (await createCustomer(cloud.ctx, { displayName: 'Other' })).id;
    const stranger = await BrowserClient.signedIn(cloud, other);
    const theirs = await stranger.get(`/barriers/${on.deviceId}/journal.receipts.jsonl`);
    const none = await stranger.get('/barriers/DNOSUCHONE1/journal.receipts.jsonl');
    expect(theirs.status).toBe(404);
    expect(none.status).toBe(404);
    expect(theirs.html).not.toContain(on.deviceId);
  });
});

/** The chain as an operator would rebuild it after deleting an entry: every hash computed again, re-signed. */
function rebuildWithout(file: Export, entryId: number): Export {
  let prev = String(file.header.genesis);
  const lines = file.lines
    .filter((line) => line.entry.id !== entryId)
    .map((line, i) => {
      const hash = createHash('sha256')
        .update(prev + canonicalJson(line.entry as never), 'utf8')
        .digest('hex');
      const rebuilt = { ...line, seq: i + 1, prev, hash };
      prev = hash;
      return rebuilt;
    });
  const { sig: _sig, ...unsigned } = file.header;
  const head = { seq: lines.length, hash: prev };
  const body = { ...unsigned, head };
  const sig = Buffer.from(cloud.ctx.serviceKey.sign(signedBytes(RECEIPTS_TAG, body as never))).toString(
    'base64',
  );
  const header = { ...body, sig } as Export['header'];
  const text = [header, ...lines].map((line) => `${JSON.stringify(line)}\n`).join('');
  return { text, header, lines };
}

describe('tampering', () => {
  /** A sealed barrier of five entries, its entries' ids, and a check that its export is intact first. */
  async function sealedGate(): Promise<{ on: Gate; ids: number[] }> {
    const on = await gate();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await entry(on, { actor: `Driver ${i}` }));
    await sealFinalEntries(cloud.ctx);
    expectIntact(await exportOf(on), 5);
    return { on, ids };
  }

  async function cloudCheck(on: Gate) {
    await checkChain(cloud.ctx, { deviceId: on.deviceId, customerId }, { full: true });
    return cloud.ctx.db
      .selectFrom('journal_chains')
      .select(['broken_entry', 'broken_reason', 'checked_at'])
      .where('device_id', '=', on.deviceId)
      .executeTakeFirstOrThrow();
  }

  it('[attack:receipts.edited-entry] an entry edited in the database breaks the chain at that entry', async () => {
    const { on, ids } = await sealedGate();
    await cloud.ctx.db
      .updateTable('journal')
      .set({ actor: 'Someone else' })
      .where('id', '=', ids[2]!)
      .execute();
    expectBrokenAt(await exportOf(on), ids[2]!);
    expect(await cloudCheck(on)).toMatchObject({
      broken_entry: ids[2],
      broken_reason: 'its content does not match its hash',
    });
    const page = visibleText((await client.get(`/barriers/${on.deviceId}`)).html);
    expect(page).toContain(`broken at entry ${ids[2]}: its content does not match its hash`);
  });

  it('the operator checks a barrier in full on demand: gatelink-admin receipts check', async () => {
    const { on, ids } = await sealedGate();
    const admin = (args: string[]) => {
      const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
      return runProgram([ADMIN, '--url', cloud.baseUrl, '--token', cloud.operatorToken, ...args], {
        cwd: ROOT,
        env,
      });
    };
    const intact = await admin(['receipts', 'check', on.deviceId]);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout).toContain(
      `Customer ${customerId}: intact, 5 sealed entries checked from the first.`,
    );

    await cloud.ctx.db
      .updateTable('journal')
      .set({ actor: 'Someone else' })
      .where('id', '=', ids[3]!)
      .execute();
    const broken = await admin(['receipts', 'check', on.deviceId]);
    expect(broken.code, broken.stderr).toBe(0);
    expect(broken.stdout).toContain(
      `Customer ${customerId}: BROKEN at entry ${ids[3]} (place 4): its content does not match its hash.`,
    );
    const page = visibleText((await client.get(`/barriers/${on.deviceId}`)).html);
    expect(page).toContain(`broken at entry ${ids[3]}: its content does not match its hash`);

    const unknown = await admin(['receipts', 'check', 'D0000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No controller D0000000000');
  });

  it('[attack:receipts.deleted-entry] an entry deleted from the database breaks the chain at the next one', async () => {
    const { on, ids } = await sealedGate();
    await cloud.ctx.db.deleteFrom('journal').where('id', '=', ids[1]!).execute();
    expectBrokenAt(await exportOf(on), ids[2]!);
    expect(await cloudCheck(on)).toMatchObject({ broken_entry: ids[2] });
  });

  it('[attack:receipts.deleted-entry] the last entry deleted shows as entries missing at the end', async () => {
    const { on, ids } = await sealedGate();
    await cloud.ctx.db.deleteFrom('journal').where('id', '=', ids[4]!).execute();
    const file = await exportOf(on);
    expect(verifyHere(file)).toEqual({ ok: false, message: 'head' });
    if (pythonReady) expect(runPython(file)).toMatchObject({ status: 1 });
    expect(await cloudCheck(on)).toMatchObject({
      broken_entry: null,
      broken_reason: expect.stringContaining('missing'),
    });
  });

  it('[attack:receipts.swapped-entries] two entries swapped in the chain break it', async () => {
    const { on, ids } = await sealedGate();
    await sql`update journal set chain_seq = -1 where id = ${ids[1]}`.execute(cloud.ctx.db);
    await sql`update journal set chain_seq = 2 where id = ${ids[3]}`.execute(cloud.ctx.db);
    await sql`update journal set chain_seq = 4 where id = ${ids[1]}`.execute(cloud.ctx.db);
    expectBrokenAt(await exportOf(on), ids[3]!);
    expect(await cloudCheck(on)).toMatchObject({ broken_entry: ids[3] });
  });

  it('[attack:receipts.swapped-entries] two entries whose contents were swapped break it', async () => {
    const { on, ids } = await sealedGate();
    await cloud.ctx.db.updateTable('journal').set({ actor: 'Driver 3' }).where('id', '=', ids[1]!).execute();
    await cloud.ctx.db.updateTable('journal').set({ actor: 'Driver 1' }).where('id', '=', ids[3]!).execute();
    expectBrokenAt(await exportOf(on), ids[1]!);
    expect(await cloudCheck(on)).toMatchObject({ broken_entry: ids[1] });
  });

  it('[attack:receipts.edited-entry] an entry edited after the cloud checked it is found by the next full check', async () => {
    const { on, ids } = await sealedGate();
    await checkChain(cloud.ctx, { deviceId: on.deviceId, customerId }, { full: true });
    await cloud.ctx.db.updateTable('journal').set({ outcome: 'revoked' }).where('id', '=', ids[0]!).execute();
    clock.advance(25 * HOUR);
    // Each run checks a few chains in full, those checked least recently first.
    for (let run = 0; run < 10; run++) await checkChains(cloud.ctx);
    const chain = await cloud.ctx.db
      .selectFrom('journal_chains')
      .select(['broken_entry', 'full_checked_at'])
      .where('device_id', '=', on.deviceId)
      .executeTakeFirstOrThrow();
    expect(chain).toEqual({ broken_entry: ids[0], full_checked_at: clock.now() });
  });

  it('[attack:receipts.forged-ack] an acknowledgement not signed by the controller is found', async () => {
    const on = await gate();
    const forged = await entry(on, { signer: { deviceId: on.deviceId, key: SigningKey.generate() } });
    await sealFinalEntries(cloud.ctx);
    expectBrokenAt(await exportOf(on), forged);
    expect(await cloudCheck(on)).toMatchObject({
      broken_entry: forged,
      broken_reason: "its acknowledgement's signature does not verify",
    });
  });

  it('the barrier page says how many entries are sealed and that the last check found them intact', async () => {
    const { on } = await sealedGate();
    // The periodic check: every chain from where it was last checked; the broken ones above stay broken.
    await checkChains(cloud.ctx);
    const chain = await cloud.ctx.db
      .selectFrom('journal_chains')
      .select(['checked_seq', 'broken_entry', 'broken_reason'])
      .where('device_id', '=', on.deviceId)
      .executeTakeFirstOrThrow();
    expect(chain).toEqual({ checked_seq: 5, broken_entry: null, broken_reason: null });
    const page = visibleText((await client.get(`/barriers/${on.deviceId}`)).html);
    expect(page).toMatch(/Journal receipts: 5 entries sealed, last checked .+: intact/);
  });
});

describe('a barrier over its life', () => {
  it('a replaced controller’s chain moves with its journal and still verifies, with both controllers’ keys', async () => {
    const on = await gate();
    await withSensor(on);
    // A refusal carries no signature: the chain knows no controller key before the replacement.
    const before = [await entry(on, { outcome: 'revoked' })];
    const watched = await entry(on, { gate: { opened: true } });
    await sealFinalEntries(cloud.ctx);
    const fresh = { deviceId: newDeviceId(), key: SigningKey.generate() };
    await cloud.ctx.db
      .insertInto('devices')
      .values({
        id: fresh.deviceId,
        label: 'New box',
        public_key: fresh.key.publicKey.base64,
        provisioned_at: clock.now(),
        created_at: clock.now(),
      })
      .execute();
    await replaceController(
      cloud.ctx,
      { removeDevice: async () => {} },
      { oldDeviceId: on.deviceId, customerId, target: { deviceId: fresh.deviceId } },
    );
    // The entry the old controller acknowledged is sealed after the replacement retired its key.
    await cloud.ctx.db
      .updateTable('journal')
      .set({ gate_closed_at: clock.now() })
      .where('id', '=', watched)
      .execute();
    const moved = { ...on, deviceId: fresh.deviceId, key: fresh.key };
    const after = await entry(moved, { object: 1 });
    await sealFinalEntries(cloud.ctx);
    const file = await exportOf(moved);
    expect(file.lines.map((line) => line.entry.id)).toEqual([...before, watched, after]);
    expect(file.header.device_keys).toEqual({
      [on.deviceId]: on.key.publicKey.base64,
      [fresh.deviceId]: fresh.key.publicKey.base64,
    });
    expectIntact(file, 3);
    expect(
      await checkChain(cloud.ctx, { deviceId: fresh.deviceId, customerId }, { full: true }),
    ).toMatchObject({
      intact: true,
    });
  });

  it('a replacement by a controller that holds a chain of the same owner already is refused, changing nothing', async () => {
    const on = await gate(customerId, 'Old box');
    await entry(on);
    const earlier = await gate(customerId, 'Once theirs', ['Garage']);
    await entry(earlier);
    await sealFinalEntries(cloud.ctx);
    await removeBarrier(cloud.ctx, { customerId, deviceId: earlier.deviceId });
    await expect(
      replaceController(
        cloud.ctx,
        { removeDevice: async () => {} },
        { oldDeviceId: on.deviceId, customerId, target: { deviceId: earlier.deviceId } },
      ),
    ).rejects.toMatchObject({ code: 'conflict' });
    expectIntact(await exportOf(on), 1);
  });

  it('a barrier that changed hands: the new owner’s receipts hold none of the previous owner’s entries', async () => {
    const on = await gate();
    const previous = await entry(on);
    await sealFinalEntries(cloud.ctx);
    await removeBarrier(cloud.ctx, { customerId, deviceId: on.deviceId });
    const next = (await createCustomer(cloud.ctx, { displayName: 'Next Owner' })).id;
    await cloud.ctx.db
      .updateTable('devices')
      .set({ customer_id: next, name: 'Their gate', paired_at: clock.now() })
      .where('id', '=', on.deviceId)
      .execute();
    const holder = await keyHolder(cloud.ctx, { customerId: next, barrier: on, name: 'Their cleaners' });
    const theirs = await entry({ ...on, holder });
    await sealFinalEntries(cloud.ctx);
    const file = await exportOf(on, await BrowserClient.signedIn(cloud, next));
    expect(file.lines.map((line) => line.entry.id)).toEqual([theirs]);
    expect(file.text).not.toContain(`"id":${previous},`);
    expect(file.header.genesis).toBe(
      createHash('sha256').update(`gatelink/journal/v1\n${on.deviceId}\n${next}`).digest('hex'),
    );
    expectIntact(file, 1);
    const gone = await client.get(`/barriers/${on.deviceId}/journal.receipts.jsonl`);
    expect(gone.status).toBe(404);
  });
});

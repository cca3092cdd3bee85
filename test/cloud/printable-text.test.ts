import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { CROCKFORD_ALPHABET } from '../../shared/codes.js';
import { isPrintableText } from '../../shared/printable-text.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The printable-text rule of `ref` and `actor` (cloud/README.md, "Printable text"): what would break a journal
 * line or hide in it is refused, and nothing of a refused call is stored.
 */

let database: TestDatabase;
let cloud: TestCloud;
let company: { org_id: number; secret: string };
let customerId: number;
let barrier: { deviceId: string; numberId: number };

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  company = await secretCompany(cloud, 'Printable Ltd');
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Eva Customer' })).id;
  barrier = await insertBarrier();
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

/** A customer's controller with one object, written straight to the database (no controller runs here). */
async function insertBarrier() {
  const deviceId = `D${Array.from(randomBytes(10), (byte) => CROCKFORD_ALPHABET[byte % 32]).join('')}`;
  await cloud.ctx.db
    .insertInto('devices')
    .values({ id: deviceId, label: 'Yard', customer_id: customerId, created_at: new Date() })
    .execute();
  const object = await cloud.ctx.db
    .insertInto('device_objects')
    .values({ device_id: deviceId, local_id: 'gate', label: 'Main gate', kind: 'relay' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { deviceId, numberId: object.id };
}

async function issuedKey(): Promise<number> {
  const answer = await cloud.call('request', { ...company });
  const code = answer.body.code as string;
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId: barrier.deviceId,
    objectIds: [barrier.numberId],
    keyExpiresAt: null,
  });
  return keyRef;
}

async function requestRefs(): Promise<(string | null)[]> {
  const rows = await cloud.ctx.db
    .selectFrom('requests')
    .select('ref')
    .where('company_id', '=', company.org_id)
    .execute();
  return rows.map((row) => row.ref);
}

async function journalActors(keyRef: number): Promise<string[]> {
  const rows = await cloud.ctx.db
    .selectFrom('journal')
    .select('actor')
    .where('key_id', '=', keyRef)
    .execute();
  return rows.map((row) => row.actor);
}

/** Characters refused since the rule became one, inside a text (at the ends, `actor` would be trimmed). */
const INVISIBLE: [string, string][] = [
  ['U+2028 line separator', '\u2028'],
  ['U+2029 paragraph separator', '\u2029'],
  ['U+200B zero-width space', '\u200b'],
  ['U+FEFF zero-width no-break space', '\ufeff'],
  ['U+00AD soft hyphen', '\u00ad'],
  ['U+2060 word joiner', '\u2060'],
  ['U+180E Mongolian vowel separator', '\u180e'],
  ['U+E0041 tag letter A', '\u{e0041}'],
];

/** Characters refused before, by the two rules this one replaces. */
const CONTROLS: [string, string][] = [
  ['U+202E right-to-left override', '\u202e'],
  ['U+2066 left-to-right isolate', '\u2066'],
  ['U+0007 bell', '\u0007'],
  ['U+0085 next line', '\u0085'],
];

/** Names spelt with the joiners, which stay allowed. */
const ACCEPTED: [string, string][] = [
  ['a Persian name with U+200C zero-width non-joiner', 'علی\u200cاکبر'],
  ['a Hindi word with U+200D zero-width joiner', 'क्\u200dष'],
  ['an emoji sequence with U+200D (woman mechanic)', 'Anna \u{1f469}\u200d\u{1f527}'],
];

function expectInvalidField(answer: Answer, field: string): void {
  expect({ status: answer.status, error: answer.body.error, field: answer.body.field }).toEqual({
    status: 400,
    error: 'invalid_field',
    field,
  });
}

describe('[attack:text.invisible-characters] ref of a=request', () => {
  it.each(INVISIBLE)(
    'a ref with %s answers 400 invalid_field and stores no request',
    async (_label, char) => {
      const before = await requestRefs();
      expectInvalidField(await cloud.call('request', { ...company, ref: `ORD${char}1` }), 'ref');
      expect(await requestRefs()).toEqual(before);
    },
  );
});

describe('[attack:text.invisible-characters] actor of a=open', () => {
  let keyRef: number;
  beforeAll(async () => {
    keyRef = await issuedKey();
  });
  const body = () => ({ ...company, key_ref: keyRef, number_id: barrier.numberId });

  it.each(INVISIBLE)('an actor with %s answers 400 invalid_field, not journalled', async (_label, char) => {
    expectInvalidField(await cloud.call('open', { ...body(), actor: `Anna${char}Bob` }), 'actor');
    expect(await journalActors(keyRef)).toEqual([]);
  });

  it('an actor with a lone surrogate (\\ud800 in the JSON) answers 400 invalid_field, not journalled', async () => {
    expectInvalidField(await cloud.call('open', { ...body(), actor: 'Anna\ud800' }), 'actor');
    expect(await journalActors(keyRef)).toEqual([]);
  });
});

describe('[attack:text.invisible-characters] one rule for both fields', () => {
  it.each(INVISIBLE)('%s is not printable text', (_label, char) => {
    expect(isPrintableText(`Anna${char}Bob`)).toBe(false);
  });

  it('a surrogate on its own is not printable text; a pair is', () => {
    expect(isPrintableText('Anna\ud800')).toBe(false);
    expect(isPrintableText('\udfffAnna')).toBe(false);
    expect(isPrintableText('Anna \u{1f6a7}')).toBe(true);
  });

  it.each(INVISIBLE)('%s is refused in ref and actor alike', async (_label, char) => {
    const key = await issuedKey();
    const ref = await cloud.call('request', { ...company, ref: `ORD${char}1` });
    const actor = await cloud.call('open', {
      ...company,
      key_ref: key,
      number_id: barrier.numberId,
      actor: `Anna${char}Bob`,
    });
    expectInvalidField(ref, 'ref');
    expectInvalidField(actor, 'actor');
  });
});

describe('what the rule still refuses and what it allows', () => {
  it.each(CONTROLS)('a ref or actor with %s is refused, as before', (_label, char) => {
    expect(isPrintableText(`Anna${char}Bob`)).toBe(false);
  });

  it('a ref with a lone surrogate (\\udc00 in the JSON) answers 400 invalid_field and stores no request', async () => {
    const before = await requestRefs();
    expectInvalidField(await cloud.call('request', { ...company, ref: 'ORD\udc00' }), 'ref');
    expect(await requestRefs()).toEqual(before);
  });

  it.each(ACCEPTED)('%s is printable text', (_label, text) => {
    expect(isPrintableText(text)).toBe(true);
  });

  it.each(ACCEPTED)('a ref with %s is stored as sent', async (_label, ref) => {
    const answer = await cloud.call('request', { ...company, ref });
    expect(answer.status).toBe(200);
    expect((await cloud.call('status', { ...company, code: answer.body.code })).body.ref).toBe(ref);
  });

  it.each(ACCEPTED)('an actor with %s passes, and the journal holds it as sent', async (_label, actor) => {
    const key = await issuedKey();
    const answer = await cloud.call('open', { ...company, key_ref: key, number_id: barrier.numberId, actor });
    // No controller is connected here: the call got past every check of the body.
    expect(answer.body.error).toBe('device_offline');
    expect(await journalActors(key)).toEqual([actor]);
  });
});

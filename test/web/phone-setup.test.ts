import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerBarriers } from '../../cloud/rules/devices/customer-barriers.js';
import { requestStatus } from '../../cloud/rules/requests/requests.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { insertEntries, keyHolder } from '../support/barrier-journal.js';
import { type BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A customer sets up their own phone as the controller of a gate that opens on a call (docs/design.md section
 * 9.3): the page gives one command with a code bound to their account, the phone provisions with it and is
 * theirs at once; the code sets up a phone and nothing else, works once, and brings nothing to anyone else.
 */
const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

const PHONE_GATE = { id: 'gate', label: 'Mill Lane gate', kind: 'phone' };

/** The command the page shows, and the code in it. */
async function setUpCommand(client: BrowserClient, zone = 'Europe/Berlin') {
  await client.get('/barriers/phone');
  const page = await client.post('/barriers/phone', { time_zone: zone });
  expect(page.status).toBe(200);
  const command = /<textarea[^>]*id="phone-command"[^>]*>([^<]+)<\/textarea>/.exec(page.html)?.[1] ?? '';
  const code = /sh -s -- ([0-9A-Z-]+)$/.exec(command)?.[1] ?? '';
  return { page, command, code };
}

function provision(code: string, objects: unknown[] = [PHONE_GATE]) {
  return cloud.app.inject({
    method: 'POST',
    url: '/api/device/provision',
    payload: { code, public_key: SigningKey.generate().publicKey.base64, objects, version: '0.1.0' },
  });
}

describe('a gate that opens on a call from the customer phone', () => {
  it('is offered on the barriers list, and its page says what the phone needs', async () => {
    const { client } = await signedInCustomer(cloud, 'Olga');
    const list = visibleText((await client.get('/barriers')).html);
    expect(list).toContain('Add a gate that opens on a call from my phone');
    const page = visibleText((await client.get('/barriers/phone')).html);
    expect(page).toContain('Termux, Termux:API and Termux:Boot');
    expect(page).toContain('Battery optimisation off for Termux');
    expect(page).not.toContain('sh -s --');
  });

  it('gives one command with a code, which provisions the phone as the customer own barrier at once', async () => {
    const { id, client } = await signedInCustomer(cloud, 'Pia');
    const { page, command, code } = await setUpCommand(client);
    expect(command).toBe(`curl -fsSL ${cloud.baseUrl}/api/device/install/phone | sh -s -- ${code}`);
    expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(visibleText(page.html)).toContain('It works once, until');

    const answer = await provision(code);
    expect(answer.statusCode).toBe(200);
    const body = answer.json() as Record<string, unknown>;
    expect(body.paired).toBe(true);
    expect(body.pairing_code).toBeUndefined();
    const barriers = await customerBarriers(cloud.ctx.db, id);
    expect(barriers.map((barrier) => [barrier.id, barrier.name, barrier.timeZone])).toEqual([
      [body.device_id, 'Mill Lane gate', 'Europe/Berlin'],
    ]);
    expect(visibleText((await client.get('/barriers')).html)).toContain('Mill Lane gate');
    // Once: the same code again is refused.
    expect((await provision(code)).json()).toMatchObject({ error: 'provisioning_code_invalid' });
  });

  it('sets up a phone and nothing else: relays or a modem are refused, and the code is not spent', async () => {
    const { id, client } = await signedInCustomer(cloud, 'Quentin');
    const { code } = await setUpCommand(client);
    const relay = await provision(code, [{ id: 'gate', label: 'Gate', kind: 'relay' }]);
    expect(relay.statusCode).toBe(400);
    expect(relay.json()).toMatchObject({ error: 'invalid_field', field: 'objects' });
    expect(relay.json().message).toContain('every object must be of kind phone');
    expect(await customerBarriers(cloud.ctx.db, id)).toEqual([]);
    expect((await provision(code)).statusCode).toBe(200);
  });

  it('keeps one waiting code per account: asking again ends the last, and a day ends any', async () => {
    const { client } = await signedInCustomer(cloud, 'Rosa');
    const first = await setUpCommand(client);
    const second = await setUpCommand(client);
    expect(second.code).not.toBe(first.code);
    expect((await provision(first.code)).json()).toMatchObject({ error: 'provisioning_code_invalid' });
    const third = await setUpCommand(client);
    clock.advance(24 * HOUR + 1);
    expect((await provision(third.code)).json()).toMatchObject({ error: 'provisioning_code_invalid' });
    clock.advance(-(24 * HOUR + 1));
  });

  it('brings nothing to another account: the phone it sets up is its owner, and it pairs nothing [attack:device.phone-code-other-account]', async () => {
    const owner = await signedInCustomer(cloud, 'Sven');
    const other = await signedInCustomer(cloud, 'Tara');
    const { code } = await setUpCommand(owner.client);
    // Typed into the other account's pairing form, it is no pairing code.
    await other.client.get('/barriers');
    const tried = await other.client.post('/barriers', { code, name: 'Mine now' });
    expect(tried.status).toBe(400);
    expect(await customerBarriers(cloud.ctx.db, other.id)).toEqual([]);
    // Used to provision a phone, by whoever holds it, the phone is the owner's.
    const body = (await provision(code)).json() as { device_id: string };
    expect((await customerBarriers(cloud.ctx.db, owner.id)).map((barrier) => barrier.id)).toEqual([
      body.device_id,
    ]);
    expect(await customerBarriers(cloud.ctx.db, other.id)).toEqual([]);
    expect((await other.client.get(`/barriers/${body.device_id}`)).status).toBe(404);
  });

  it('serves the phone installer with the cloud address in place', async () => {
    const script = await cloud.app.inject({ method: 'GET', url: '/api/device/install/phone' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('text/x-shellscript');
    expect(script.body).toContain(`cloud='${cloud.baseUrl}'`);
    expect(script.body).toContain('provision --phone');
  });

  it('journals an opening as a call from the phone with what its log showed, and shows how the phone stands', async () => {
    const { id, client } = await signedInCustomer(cloud, 'Ulla');
    const { code } = await setUpCommand(client);
    const provisioned = (await provision(code)).json() as {
      device_id: string;
      numbers: { number_id: number; label: string }[];
    };
    const barrier = {
      deviceId: provisioned.device_id,
      name: 'Mill Lane gate',
      objects: provisioned.numbers.map((number) => ({ id: number.number_id, label: number.label })),
    };
    const holder = await keyHolder(cloud.ctx, { customerId: id, barrier, name: 'Demo Cleaning Ltd' });
    // The company is told, in the event and in status, that this gate opens on a call from the phone.
    const issued = await cloud.ctx.db
      .selectFrom('events')
      .innerJoin('keys', 'keys.company_id', 'events.company_id')
      .innerJoin('requests', 'requests.id', 'keys.request_id')
      .select(['events.data', 'requests.code'])
      .where('events.company_id', '=', holder.companyId)
      .where('events.type', '=', 'request.issued')
      .executeTakeFirstOrThrow();
    const numbers = [{ number_id: barrier.objects[0]!.id, label: 'Mill Lane gate', phone_call: true }];
    expect((issued.data as { numbers: unknown }).numbers).toEqual(numbers);
    const status = await requestStatus(cloud.ctx.db, holder.companyId, issued.code, clock.now());
    expect(status.numbers).toEqual(numbers);
    const [rejected, answered, older] = await insertEntries(cloud.ctx, barrier, [
      { holder, actor: 'Anna' },
      { holder, actor: 'Ben' },
      { holder, actor: 'Cleo' },
    ]);
    const ack = (call?: string) => JSON.stringify({ outcome: 'opened', ...(call ? { call } : {}) });
    for (const [entry, call] of [
      [rejected, 'unanswered'],
      [answered, 'answered'],
      [older, undefined],
    ] as const) {
      await cloud.ctx.db
        .updateTable('journal')
        .set({ ack: ack(call) })
        .where('id', '=', entry!)
        .execute();
    }
    const journal = visibleText((await client.get(`/barriers/${barrier.deviceId}/journal`)).html);
    expect(journal.match(/Called the gate from your phone/g)).toHaveLength(3);
    expect(journal).not.toMatch(/Opened\s+Mill Lane gate/);
    expect(journal).toContain('The gate did not pick up: most gates open by turning the call away.');
    expect(journal).toContain('The gate answered the call.');
    expect(journal).toContain("The call was placed; the phone's call log did not say how it ended.");

    await cloud.ctx.db
      .updateTable('devices')
      .set({
        online: false,
        state_at: clock.now(),
        telemetry_at: clock.now(),
        telemetry: JSON.stringify({
          battery: { percentage: 12, plugged: false },
          network: { sim: 'ready', operator: 'Telekom', type: 'lte' },
        }),
      })
      .where('id', '=', barrier.deviceId)
      .execute();
    const page = visibleText((await client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(page).toContain('Your phone');
    expect(page).toContain('Offline: companies cannot open until your phone is back online.');
    expect(page).toContain('battery 12 %; network Telekom');
    expect(page).toContain('call from your phone');
  });
});

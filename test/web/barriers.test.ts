import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAIRING_LIMITS } from '../../cloud/faces/customer-pages/barrier-routes.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import {
  companyRequest,
  companyStatus,
  insertBarrier,
  type SecretAuth,
  signedInCustomer,
} from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FakeDevice } from '../support/fake-device.js';

/**
 * Barriers as a customer keeps them (docs/design.md sections 9 and 10.4): pairing a controller with its code,
 * naming it, its objects and whether it is online, and nothing of another customer's barriers or keys, seen
 * or changed.
 */
const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let company: SecretAuth;
const devices: FakeDevice[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  // Behind a proxy on loopback, as deployed: X-Forwarded-For names the client, so a test can be two of them.
  cloud = await startTestCloud({ database, clock, env: { TRUST_PROXY: 'loopback' } });
  company = await secretCompany(cloud, 'Parcel Express');
});

afterAll(async () => {
  for (const device of devices) await device.client.endAsync();
  await cloud?.stop();
  await database?.close();
});

const text = visibleText;

/** A controller as an installer leaves it: provisioned with two objects, its pairing code on its screen. */
async function provisionedController() {
  const added = await cloud.ops('POST', '/ops/devices', { label: 'Installer: yard' });
  const { device_id, provisioning_code } = added.body.device as {
    device_id: string;
    provisioning_code: string;
  };
  const key = SigningKey.generate();
  const response = await cloud.app.inject({
    method: 'POST',
    url: '/api/device/provision',
    payload: {
      code: provisioning_code,
      public_key: key.publicKey.base64,
      objects: [
        { id: 'gate', label: 'Main gate', kind: 'relay' },
        { id: 'door', label: 'Side door', kind: 'gsm' },
      ],
      version: '0.1.0',
    },
  });
  const body = response.json() as { pairing_code: string; mqtt: { password: string } };
  return { deviceId: device_id, pairingCode: body.pairing_code, password: body.mqtt.password, key };
}

async function pair(client: BrowserClient, code: string, name: string, from?: string) {
  const headers: Record<string, string> = from ? { 'x-forwarded-for': from } : {};
  await client.get('/barriers', headers);
  return client.post('/barriers', { code, name }, headers);
}

/** The `n`th guess at a pairing code (well formed, no controller's), from the client address `from`. */
function guess(client: BrowserClient, n: number, from: string) {
  return pair(client, `ZZZZ${String(n).padStart(4, '0')}`, 'Home', from);
}

/** A key of Parcel Express on the barrier, granted by its owner. */
async function grantedKey(customerId: number, deviceId: string, numberId: number) {
  const code = await companyRequest(cloud, company);
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId,
    objectIds: [numberId],
    keyExpiresAt: null,
  });
  return { code, keyRef };
}

async function numbersOf(deviceId: string) {
  return cloud.ctx.db
    .selectFrom('device_objects')
    .select(['id', 'label'])
    .where('device_id', '=', deviceId)
    .orderBy('id')
    .execute();
}

describe('adding a barrier', () => {
  it('pairs with the code as typed, names it, shows its objects, and shows it online once its controller connects', async () => {
    const controller = await provisionedController();
    const { client } = await signedInCustomer(cloud, 'Paula');
    const typed = controller.pairingCode
      .toLowerCase()
      .replace(/0/g, 'o')
      .replace(/1/g, 'l')
      .replace('-', ' - ');
    const paired = await pair(client, typed, '  Mill Lane 4  ');
    expect(paired.status, text(paired.html)).toBe(303);
    // The name stays out of the address; the list finds it again by the barrier's id.
    expect(paired.location).toBe(`/barriers?added=${controller.deviceId}`);

    const added = await client.get(paired.location!);
    const notice = /<div class="notice ok" role="status">([\s\S]*?)<\/div>/.exec(added.html)?.[1] ?? '';
    expect(text(notice)).toBe(
      'Mill Lane 4 added. Companies you grant access to can now open it. Go to Mill Lane 4 to see what it opens and whether its controller is online.',
    );
    expect(notice).toContain(`<a href="/barriers/${controller.deviceId}">Go to Mill Lane 4</a>`);
    // Reloaded later, or opened on its own, the list says the same only of a barrier of one's own.
    expect(text((await client.get('/barriers')).html)).not.toContain('added');

    const page = text((await client.get(`/barriers/${controller.deviceId}`)).html);
    expect(page).toContain('Mill Lane 4');
    expect(page).toContain('Main gate (relay output)');
    expect(page).toContain('Side door (phone call)');
    expect(page).toContain('Offline');
    expect(page).toContain('Its controller has not connected yet');
    expect(page).toContain('No company can open this barrier');

    const device = await FakeDevice.connect(
      cloud.controllerLink.deviceUrl,
      { id: controller.deviceId, password: controller.password, key: controller.key },
      { prefix: cloud.ctx.config.topicPrefix, cloudKey: cloud.ctx.serviceKey.publicKey },
    );
    devices.push(device);
    await expect
      .poll(async () => text((await client.get(`/barriers/${controller.deviceId}`)).html))
      .toContain('Connected since');
    const list = text((await client.get('/barriers')).html);
    expect(list).toContain('Mill Lane 4');
    expect(list).toContain('Online');
    expect(list).toContain('No company has access');

    const row = await cloud.ctx.db
      .selectFrom('devices')
      .select(['paired_at', 'name'])
      .where('id', '=', controller.deviceId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ paired_at: clock.now(), name: 'Mill Lane 4' });
  });

  it('suggests naming the place, not a gate, which is what its objects are called', async () => {
    const { client } = await signedInCustomer(cloud, 'Naming Nina');
    const form = text((await client.get('/barriers')).html);
    expect(form).toContain(
      'What you call it, such as Home, Mill Lane 4 or Holiday flat. You can change it later.',
    );
    expect(form).not.toContain('such as Front gate');
    const unnamed = await pair(client, 'ZZZZ-0000', '');
    expect(text(unnamed.html)).toContain(
      'Give the barrier a name, such as Home, Mill Lane 4 or Holiday flat.',
    );
  });

  it('counts the companies that can open each barrier', async () => {
    const owner = await signedInCustomer(cloud, 'Counting Cora');
    const barrier = await insertBarrier(cloud, owner.id, { name: 'Counted gate' });
    await grantedKey(owner.id, barrier.deviceId, barrier.objects[0]!.number_id);
    await grantedKey(owner.id, barrier.deviceId, barrier.objects[1]!.number_id);
    const other = await secretCompany(cloud, 'Second Co');
    const code = await companyRequest(cloud, other);
    await claimRequest(cloud.ctx, { code, customerId: owner.id });
    await issueAccessKey(cloud.ctx, {
      code,
      customerId: owner.id,
      deviceId: barrier.deviceId,
      objectIds: [barrier.objects[0]!.number_id],
      keyExpiresAt: null,
    });
    expect(text((await owner.client.get('/barriers')).html)).toContain('2 companies have access');
    const page = text((await owner.client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(page).toContain('Parcel Express');
    expect(page).toContain('Second Co');
    expect(page).toContain('May open: Main gate');
    expect(page).toContain('May open: Side door');
    expect(page).toContain('Domain not confirmed');
  });

  it('says what is wrong with a code or a name, and keeps what was typed', async () => {
    const controller = await provisionedController();
    const { client } = await signedInCustomer(cloud, 'Typo Tim');
    const cases: [Record<string, string>, number, string][] = [
      [{ code: 'ABC', name: 'Gate' }, 400, 'A pairing code has 8 letters and digits'],
      [{ code: 'UUUU-UUUU', name: 'Gate' }, 400, 'A pairing code has 8 letters and digits'],
      [{ code: controller.pairingCode, name: '   ' }, 400, 'Give the barrier a name'],
      [{ code: controller.pairingCode, name: 'Gate\u202Eetag' }, 400, 'on one line'],
      [{ code: controller.pairingCode, name: 'Gate\nTwo' }, 400, 'on one line'],
      [{ code: controller.pairingCode, name: 'G'.repeat(61) }, 400, 'Keep the name to 60 characters'],
      [
        { code: 'ZZZZ-ZZZZ', name: 'Gate' },
        403,
        'This pairing code is unknown, already used or older than 24 hours',
      ],
    ];
    for (const [fields, status, message] of cases) {
      const answer = await pair(client, fields.code!, fields.name!);
      expect(answer.status, message).toBe(status);
      expect(text(answer.html)).toContain('There is a problem');
      expect(text(answer.html)).toContain(message);
      expect(answer.html).toContain(`value="${fields.code}"`);
    }
    expect(text((await client.get('/barriers')).html)).toContain('You have no barrier yet');
    // The code was not spent by the refusals.
    expect((await pair(client, controller.pairingCode, 'Gate')).status).toBe(303);
  });

  it('renames a barrier, by the printable-text rules', async () => {
    const owner = await signedInCustomer(cloud, 'Renaming Rita');
    const barrier = await insertBarrier(cloud, owner.id, { name: 'Old name' });
    await owner.client.get(`/barriers/${barrier.deviceId}`);
    const renamed = await owner.client.post(`/barriers/${barrier.deviceId}/name`, { name: 'Garden gate 🌿' });
    expect(renamed.status).toBe(303);
    const page = text((await owner.client.get(renamed.location!)).html);
    expect(page).toContain('Name saved');
    expect(page).toContain('Garden gate 🌿');
    const refused = await owner.client.post(`/barriers/${barrier.deviceId}/name`, { name: 'Evil\u200Bname' });
    expect(refused.status).toBe(400);
    expect(text(refused.html)).toContain('on one line');
    expect(text((await owner.client.get(`/barriers/${barrier.deviceId}`)).html)).toContain('Garden gate 🌿');
  });
});

describe('[attack:web.pairing-steal] a controller belongs to one customer at a time', () => {
  it('a used pairing code takes nothing from the owner', async () => {
    const controller = await provisionedController();
    const owner = await signedInCustomer(cloud, 'Rightful Rosa');
    const thief = await signedInCustomer(cloud, 'Thief Theo');
    expect((await pair(owner.client, controller.pairingCode, 'Rosa gate')).status).toBe(303);
    const stolen = await pair(thief.client, controller.pairingCode, 'Mine now');
    expect(stolen.status).toBe(403);
    expect(text(stolen.html)).toContain('already used');
    expect(text((await thief.client.get('/barriers')).html)).toContain('You have no barrier yet');
    expect((await thief.client.get(`/barriers/${controller.deviceId}`)).status).toBe(404);
    expect(text((await owner.client.get(`/barriers/${controller.deviceId}`)).html)).toContain('Rosa gate');
  });

  it('a pairing code older than 24 hours is refused', async () => {
    const controller = await provisionedController();
    const late = await signedInCustomer(cloud, 'Late Lars');
    clock.advance(24 * HOUR + 1000);
    const answer = await pair(late.client, controller.pairingCode, 'Late gate');
    expect(answer.status).toBe(403);
    expect(text(answer.html)).toContain('older than 24 hours');
  });

  it('a re-provisioned controller paired by a new customer revokes every key of the previous owner, with its event', async () => {
    const controller = await provisionedController();
    const before = await signedInCustomer(cloud, 'Seller Siri');
    await pair(before.client, controller.pairingCode, 'Siri private name');
    const [gate] = await numbersOf(controller.deviceId);
    const { code, keyRef } = await grantedKey(before.id, controller.deviceId, gate!.id);

    // Provisioning the controller again (a new owner's installer) gives it a fresh pairing code.
    await cloud.ctx.db
      .updateTable('devices')
      .set({ pairing_code: 'NEW0WNER', pairing_expires_at: new Date(clock.now().getTime() + HOUR) })
      .where('id', '=', controller.deviceId)
      .execute();
    const after = await signedInCustomer(cloud, 'Buyer Bo');
    const paired = await pair(after.client, 'new0wner', 'Bo gate');
    expect(paired.status).toBe(303);

    const status = await companyStatus(cloud, company, code);
    expect(status.body.state).toBe('revoked');
    const open = await cloud.call('open', {
      ...company,
      key_ref: keyRef,
      number_id: gate!.id,
      actor: 'Courier',
    });
    expect({ status: open.status, error: open.body.error }).toEqual({ status: 403, error: 'revoked' });
    const events = await cloud.ctx.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('company_id', '=', company.org_id)
      .where('type', '=', 'request.revoked')
      .execute();
    expect(events.map((event) => (event.data as { code: string }).code)).toContain(code);

    const buyerPage = text((await after.client.get(`/barriers/${controller.deviceId}`)).html);
    expect(buyerPage).toContain('Bo gate');
    expect(buyerPage).not.toContain('Siri');
    expect(buyerPage).not.toContain('Parcel Express');
    expect((await before.client.get(`/barriers/${controller.deviceId}`)).status).toBe(404);
    // The request page tells the previous owner their access ended, and nothing of the new owner.
    const theirRequest = text((await before.client.get(`/c/${code}`)).html);
    expect(theirRequest).toContain('Withdrawn');
    expect(theirRequest).toContain('A barrier that is no longer yours');
    expect(theirRequest).not.toContain('Bo gate');
  });

  it('the same owner pairing their controller again keeps the access they gave', async () => {
    const controller = await provisionedController();
    const owner = await signedInCustomer(cloud, 'Keeping Kai');
    await pair(owner.client, controller.pairingCode, 'Kai gate');
    const [gate] = await numbersOf(controller.deviceId);
    const { code } = await grantedKey(owner.id, controller.deviceId, gate!.id);
    await cloud.ctx.db
      .updateTable('devices')
      .set({ pairing_code: 'AGA1NKA1', pairing_expires_at: new Date(clock.now().getTime() + HOUR) })
      .where('id', '=', controller.deviceId)
      .execute();
    await owner.client.get('/barriers');
    expect((await owner.client.post('/barriers', { code: 'AGA1NKA1', name: 'Kai gate' })).status).toBe(303);
    expect((await companyStatus(cloud, company, code)).body.state).toBe('issued');
  });
});

describe('[attack:provisioning.code-reuse] guessing pairing codes', () => {
  const { perAccount, perAddress } = PAIRING_LIMITS;

  it("stops one account at its own limit, and leaves others behind the same address theirs until the address's", async () => {
    clock.advance(perAddress.windowMs);
    const household = '203.0.113.10';
    const guesser = await signedInCustomer(cloud, 'Guessing Gus');
    for (let i = 0; i < perAccount.max; i++)
      expect((await guess(guesser.client, i, household)).status).toBe(403);
    for (let i = 0; i < 5; i++) {
      const stopped = await guess(guesser.client, 100 + i, household);
      expect(stopped.status).toBe(429);
      expect(text(stopped.html)).toContain('Too many pairing codes tried from your account');
    }

    // Gus's refused guesses did not count against the address: Sam, at home too, has all of his.
    const sharing = await signedInCustomer(cloud, 'Sharing Sam');
    for (let i = 0; i < perAddress.max - perAccount.max; i++) {
      expect((await guess(sharing.client, i, household)).status).toBe(403);
    }
    // The address has had its 20 now, whichever account asks.
    const third = await signedInCustomer(cloud, 'Third Thea');
    const refused = await guess(third.client, 0, household);
    expect(refused.status).toBe(429);
    expect(text(refused.html)).toContain('Too many pairing codes tried from your network');
    // Thea's own allowance is hers elsewhere.
    const controller = await provisionedController();
    expect((await pair(third.client, controller.pairingCode, 'Home', '198.51.100.99')).status).toBe(303);
  });

  it('limits an account across addresses, a real code included', async () => {
    clock.advance(perAccount.windowMs);
    const roamer = await signedInCustomer(cloud, 'Roaming Rob');
    for (let i = 0; i < perAccount.max; i++) {
      expect((await guess(roamer.client, i, `198.51.100.${i + 1}`)).status).toBe(403);
    }
    const controller = await provisionedController();
    const refused = await pair(roamer.client, controller.pairingCode, 'Home', '192.0.2.77');
    expect(refused.status).toBe(429);
    expect(text(refused.html)).toContain('Too many pairing codes tried from your account');
    clock.advance(perAccount.windowMs);
    expect((await pair(roamer.client, controller.pairingCode, 'Home', '192.0.2.77')).status).toBe(303);
  });

  it('answers 429 with the barriers page: the form, the name kept but not the code, and how long to wait', async () => {
    clock.advance(perAccount.windowMs);
    const from = { 'x-forwarded-for': '203.0.113.20' };
    const { client } = await signedInCustomer(cloud, 'Patient Pia');
    for (let i = 0; i < perAccount.max; i++)
      expect((await guess(client, i, from['x-forwarded-for'])).status).toBe(403);
    await client.get('/barriers?next=/c/ABCDEFGHJKMN', from);
    const refused = await client.post(
      '/barriers',
      { code: 'zzzz-9999', name: 'Holiday flat', next: '/c/ABCDEFGHJKMN' },
      from,
    );
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(perAccount.windowMs / 1000);
    const message = /Too many pairing codes tried from your account; try again in \d+ (seconds|minutes)\./;
    const summary = /<div class="notice error" role="alert"[\s\S]*?<\/div>/.exec(refused.html)?.[0] ?? '';
    expect(summary).toContain('There is a problem');
    expect(summary).toMatch(new RegExp(`<a href="#code">${message.source}</a>`));
    expect(refused.html).toMatch(new RegExp(`<p class="field-error" id="code-error">${message.source}</p>`));
    expect(text(refused.html)).toContain('Add a barrier');
    expect(refused.html).toContain('<form method="post" action="/barriers"');
    expect(refused.html).toContain('name="next" value="/c/ABCDEFGHJKMN"');
    expect(refused.html).toContain('id="name" name="name" value="Holiday flat"');
    // An empty value is written as the bare attribute.
    expect(refused.html).toMatch(/id="code" name="code" value(?!=)/);
    expect(refused.html.toLowerCase()).not.toContain('zzzz-9999');
  });

  it('counts replacing a controller too, and says so beside the new code on the barrier page', async () => {
    clock.advance(perAccount.windowMs);
    const from = '203.0.113.30';
    const owner = await signedInCustomer(cloud, 'Replacing Rae');
    const barrier = await insertBarrier(cloud, owner.id, { name: 'Holiday flat' });
    for (let i = 0; i < perAccount.max; i++) expect((await guess(owner.client, i, from)).status).toBe(403);
    await owner.client.get(`/barriers/${barrier.deviceId}`, { 'x-forwarded-for': from });
    const refused = await owner.client.post(
      `/barriers/${barrier.deviceId}/replace`,
      { new_code: 'ZZZZ-9999' },
      { 'x-forwarded-for': from },
    );
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(text(refused.html)).toContain('Replace the controller');
    expect(refused.html).toMatch(/<p class="field-error" id="new_code-error">Too many pairing codes tried/);
    expect(refused.html).not.toContain('ZZZZ-9999');
    clock.advance(perAccount.windowMs);
  });
});

describe("[attack:web.other-customer-urls] another customer's barrier and keys", () => {
  it('answer 404 to the page, the rename and the withdrawal, and nothing changes', async () => {
    const owner = await signedInCustomer(cloud, 'Owner Otto');
    const barrier = await insertBarrier(cloud, owner.id, { name: 'Otto gate' });
    const { code, keyRef } = await grantedKey(owner.id, barrier.deviceId, barrier.objects[0]!.number_id);
    const intruder = await signedInCustomer(cloud, 'Intruder Ida');
    const ownBarrier = await insertBarrier(cloud, intruder.id, { name: 'Ida gate' });

    await intruder.client.get('/barriers');
    const page = await intruder.client.get(`/barriers/${barrier.deviceId}`);
    expect(page.status).toBe(404);
    expect(page.html).not.toContain('Otto');
    expect((await intruder.client.post(`/barriers/${barrier.deviceId}/name`, { name: 'Taken' })).status).toBe(
      404,
    );
    const withdraw = await intruder.client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`);
    expect(withdraw.status).toBe(404);
    // Through a barrier of their own, the key is not found either.
    expect(
      (await intruder.client.post(`/barriers/${ownBarrier.deviceId}/keys/${keyRef}/withdraw`)).status,
    ).toBe(404);
    for (const path of ['/barriers/not-a-barrier', `/barriers/${barrier.deviceId.toLowerCase()}`]) {
      expect((await intruder.client.get(path)).status).toBe(404);
    }

    expect((await companyStatus(cloud, company, code)).body.state).toBe('issued');
    const ownerPage = text((await owner.client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(ownerPage).toContain('Otto gate');
    expect(ownerPage).toContain('Parcel Express');
    expect(text((await intruder.client.get('/barriers')).html)).not.toContain('Otto');
    // Nor does the list's notice name a barrier that is not one's own.
    const notice = text((await intruder.client.get(`/barriers?added=${barrier.deviceId}`)).html);
    expect(notice).not.toContain('Otto');
    expect(notice).not.toContain('added');
  });

  it('a key of the owner posted through another of their own barriers is not found there either', async () => {
    const owner = await signedInCustomer(cloud, 'Two Gates Tina');
    const first = await insertBarrier(cloud, owner.id, { name: 'First' });
    const second = await insertBarrier(cloud, owner.id, { name: 'Second' });
    const { code, keyRef } = await grantedKey(owner.id, first.deviceId, first.objects[0]!.number_id);
    await owner.client.get(`/barriers/${second.deviceId}`);
    expect((await owner.client.post(`/barriers/${second.deviceId}/keys/${keyRef}/withdraw`)).status).toBe(
      404,
    );
    expect((await companyStatus(cloud, company, code)).body.state).toBe('issued');
  });

  it('send a signed-out browser to sign in, and come back', async () => {
    const answer = await new BrowserClient(cloud.app).get('/barriers');
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('/signin?next=%2Fbarriers');
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey, revokeAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { sweepExpired } from '../../cloud/rules/access-keys/expiry.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { OPEN_EVENT_FIELDS } from '../../cloud/rules/events/event-data.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { declineRequest } from '../../cloud/rules/requests/decline.js';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { outbox, setCallback } from '../support/event-company.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * A company that set a callback address receives every event of the customer story, verifiably signed
 * (issue 15, "Done when"; docs/design.md section 6): its request claimed and issued, an opening that worked and
 * one refused, a revocation and the refused opening after it, a request the customer declined, a request that
 * lapsed and a key whose lifetime ended, recorded by the sweep (which leaves the declined one alone). The cloud runs its delivery worker as in production (woken by the commits), a
 * real controller runtime opens, and the receiver checks each signature with OpenSSL.
 */
const OBJECTS_YAML = `
objects:
  - id: front
    label: Front gate
    kind: simulated
    pulse_ms: 0
  - id: side
    label: Side gate
    kind: simulated
    pulse_ms: 0
clock:
  check: none
`;
const HOUR = 3600_000;

describe('events of the customer story at the callback address', () => {
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  let database: TestDatabase;
  let cloud: TestCloud;
  let receiver: WebhookReceiver;
  let controller: Controller;
  let dir: string;
  let company: { org_id: number; secret: string };
  let numbers: Record<'front' | 'side', number>;
  let customerId: number;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({
      database,
      clock,
      eventDelivery: { allowPrivateAddresses: true, timeoutMs: 2000 },
    });
    receiver = new WebhookReceiver();
    const published = await fetch(`${cloud.baseUrl}/.well-known/service.json`);
    await receiver.start(((await published.json()) as { key: string }).key);
    company = await secretCompany(cloud, 'Story Couriers');
    await setCallback(cloud.ctx, company.org_id, receiver.url);

    dir = await mkdtemp(join(tmpdir(), 'gatelink-events-'));
    const created = await cloud.ops('POST', '/ops/devices', { label: 'Yard' });
    const device = created.body.device as { provisioning_code: string };
    await writeFile(join(dir, 'objects.yaml'), OBJECTS_YAML);
    const provisioned = await provision({
      cloud: cloud.baseUrl,
      code: device.provisioning_code,
      configPath: join(dir, 'device.yaml'),
      objectsFrom: join(dir, 'objects.yaml'),
    });
    const numberOf = (id: string) => provisioned.response.numbers.find((n) => n.id === id)!.number_id;
    numbers = { front: numberOf('front'), side: numberOf('side') };
    const config = loadConfig(join(dir, 'device.yaml'));
    const driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    controller = new Controller(config, {
      drivers: { simulated: driver },
      reconnectMinMs: 50,
      log: () => {},
    });
    await controller.start();
    customerId = (await createCustomer(cloud.ctx, { displayName: 'Eva Customer' })).id;
    await pairDevice(cloud.ctx, { customerId, pairingCode: provisioned.response.pairing_code! });
  });

  afterAll(async () => {
    await controller?.stop();
    await cloud?.stop();
    await receiver?.stop();
    await database?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const call = (action: string, body: Record<string, unknown>) =>
    cloud.call(action, { org_id: company.org_id, secret: company.secret, ...body });

  async function grant(ref: string, keyExpiresAt: Date | null): Promise<{ code: string; keyRef: number }> {
    const code = (await call('request', { ref })).body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    const deviceId = (
      await cloud.ctx.db
        .selectFrom('devices')
        .select('id')
        .where('customer_id', '=', customerId)
        .executeTakeFirstOrThrow()
    ).id;
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId,
      objectIds: [numbers.front],
      keyExpiresAt,
    });
    return { code, keyRef };
  }

  async function openWith(keyRef: number, numberId: number): Promise<number> {
    const answer = await call('open', { key_ref: keyRef, number_id: numberId, actor: 'Anna, van 7' });
    return answer.status;
  }

  /** Every attempt is journalled with its event, so the story waits for the controller rather than retrying. */
  async function controllerOnline(): Promise<void> {
    await expect
      .poll(async () => {
        const { devices } = (await cloud.ops('GET', '/ops/devices')).body as {
          devices: { online: boolean }[];
        };
        return devices.some((device) => device.online);
      })
      .toBe(true);
  }

  it('delivers every kind, each signed, in the order they happened', async () => {
    // The controller checks a command's lifetime against its own clock: the cloud's starts from the real one.
    clock.set(new Date());
    await controllerOnline();
    const lapsing = await grant('ORD-1', new Date(clock.now().getTime() + 2 * HOUR));
    expect(await openWith(lapsing.keyRef, numbers.front)).toBe(200);
    expect(await openWith(lapsing.keyRef, numbers.side)).toBe(403);
    const withdrawn = await grant('ORD-2', null);
    await revokeAccessKey(cloud.ctx, { keyRef: withdrawn.keyRef, customerId });
    expect(await openWith(withdrawn.keyRef, numbers.front)).toBe(403);
    const declined = (await call('request', { ref: 'ORD-4', ttl_hours: 1 })).body.code as string;
    await claimRequest(cloud.ctx, { code: declined, customerId });
    await declineRequest(cloud.ctx, { code: declined, customerId });
    const unclaimed = (await call('request', { ref: 'ORD-3', ttl_hours: 1 })).body.code as string;
    clock.advance(3 * HOUR);
    expect(await sweepExpired(cloud.ctx)).toEqual({ requests: 1, keys: 1 });

    const events = await outbox(cloud.ctx, company.org_id);
    await waitFor(() => receiver.events().length === events.length, 'every event to arrive', 20_000);

    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(receiver.concurrentDuplicates).toEqual([]);
    expect(receiver.events().map((e) => e.id)).toEqual(events.map((e) => e.id));
    const kinds = receiver.events().map((e) => `${e.type} ${e.data.code}`);
    expect(kinds).toEqual([
      `request.claimed ${lapsing.code}`,
      `request.issued ${lapsing.code}`,
      `open.succeeded ${lapsing.code}`,
      `open.failed ${lapsing.code}`,
      `request.claimed ${withdrawn.code}`,
      `request.issued ${withdrawn.code}`,
      `request.revoked ${withdrawn.code}`,
      `open.failed ${withdrawn.code}`,
      `request.claimed ${declined}`,
      `request.declined ${declined}`,
      `request.expired ${unclaimed}`,
      `key.expired ${lapsing.code}`,
    ]);
    const opened = receiver.events().find((e) => e.type === 'open.succeeded')!;
    expect(Object.keys(opened.data).sort()).toEqual([...OPEN_EVENT_FIELDS].sort());
    expect(opened.data).toMatchObject({
      key_ref: lapsing.keyRef,
      number_id: numbers.front,
      outcome: 'opened',
    });
    const refused = receiver.events().filter((e) => e.type === 'open.failed');
    expect(refused.map((e) => e.data.outcome)).toEqual(['forbidden', 'revoked']);
    // The marks are written right after the answers.
    await expect
      .poll(async () => (await outbox(cloud.ctx, company.org_id)).filter((e) => !e.delivered_at).length)
      .toBe(0);
  });
});

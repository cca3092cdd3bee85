import { randomBytes } from 'node:crypto';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { CROCKFORD_ALPHABET } from '../../shared/codes.js';
import { BrowserClient } from './browser-client.js';
import type { Answer, TestCloud } from './cloud.js';

/**
 * What the request page, consent and barrier suites share: customers signed in on a browser, barriers written
 * straight to the database (a controller's own path is tried in test/web/barriers.test.ts), requests made and
 * read through the company API as a company makes and reads them.
 */
export interface SecretAuth {
  org_id: number;
  secret: string;
}

export interface TestBarrier {
  deviceId: string;
  objects: { number_id: number; label: string }[];
}

export async function signedInCustomer(
  cloud: TestCloud,
  name: string,
): Promise<{ id: number; client: BrowserClient }> {
  const customer = await createCustomer(cloud.ctx, { displayName: name });
  return { id: customer.id, client: await BrowserClient.signedIn(cloud, customer.id) };
}

/** A paired barrier of `customerId` with the given objects, named as its owner named it. */
export async function insertBarrier(
  cloud: TestCloud,
  customerId: number,
  options: { name?: string; labels?: string[]; online?: boolean } = {},
): Promise<TestBarrier> {
  const deviceId = `D${Array.from(randomBytes(10), (byte) => CROCKFORD_ALPHABET[byte % 32]).join('')}`;
  const now = cloud.ctx.clock.now();
  await cloud.ctx.db
    .insertInto('devices')
    .values({
      id: deviceId,
      label: 'Installer label',
      name: options.name ?? 'Front gate',
      customer_id: customerId,
      paired_at: now,
      created_at: now,
      online: options.online ?? false,
      state_at: options.online === undefined ? null : now,
    })
    .execute();
  const labels = options.labels ?? ['Main gate', 'Side door', 'Garage'];
  const objects = await cloud.ctx.db
    .insertInto('device_objects')
    .values(labels.map((label, i) => ({ device_id: deviceId, local_id: `o${i}`, label, kind: 'relay' })))
    .returning(['id as number_id', 'label'])
    .execute();
  return { deviceId, objects };
}

/** A request made by the company through the API; its code as the API answered it. */
export async function companyRequest(cloud: TestCloud, company: SecretAuth, ttlHours = 24): Promise<string> {
  const answer = await cloud.call('request', { ...company, ttl_hours: ttlHours });
  if (answer.status !== 200) throw new Error(`request failed: ${JSON.stringify(answer.body)}`);
  return answer.body.code as string;
}

/** What the company learns of its request. */
export async function companyStatus(cloud: TestCloud, company: SecretAuth, code: string): Promise<Answer> {
  return cloud.call('status', { ...company, code });
}

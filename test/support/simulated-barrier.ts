import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pairDevice } from '../../cloud/devices/devices.js';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import type { BrowserClient } from './browser-client.js';
import type { TestCloud } from './cloud.js';
import { signedInCustomer } from './customer-app.js';

/**
 * What the company client's suites open: a real controller runtime with simulated outputs, provisioned against
 * the cloud's HTTP address as an installer would, paired to a signed-in customer who grants requests through
 * the consent pages (docs/design.md section 10.3), as a company's customer does.
 */
const OBJECTS_YAML = `
objects:
  - id: gate
    label: Main gate
    kind: simulated
    pulse_ms: 0
  - id: garage
    label: Garage door
    kind: simulated
    pulse_ms: 0
clock:
  check: none
`;

export interface SimulatedBarrier {
  deviceId: string;
  /** number_id of each object, by its local id. */
  numbers: { gate: number; garage: number };
  /** Counts the openings each output performed (`pulses`). */
  driver: SimulatedDriver;
  customer: { id: number; client: BrowserClient };
  stop(): Promise<void>;
}

export async function simulatedBarrier(
  cloud: TestCloud,
  customerName = 'Eva Customer',
): Promise<SimulatedBarrier> {
  const dir = await mkdtemp(join(tmpdir(), 'gatelink-barrier-'));
  const created = await cloud.ops('POST', '/ops/devices', { label: 'Yard' });
  if (created.status !== 200) throw new Error(`device add failed: ${JSON.stringify(created.body)}`);
  const device = created.body.device as { provisioning_code: string };
  const objectsFile = join(dir, 'objects.yaml');
  await writeFile(objectsFile, OBJECTS_YAML);
  const configPath = join(dir, 'device.yaml');
  const { response } = await provision({
    cloud: cloud.baseUrl,
    code: device.provisioning_code,
    configPath,
    objectsFrom: objectsFile,
  });
  const numberOf = (id: string) => response.numbers.find((n) => n.id === id)!.number_id;
  const config = loadConfig(configPath);
  const driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
  const controller = new Controller(config, {
    drivers: { simulated: driver },
    reconnectMinMs: 50,
    log: () => {},
  });
  await controller.start();
  await waitUntilOnline(cloud, response.device_id);
  const customer = await signedInCustomer(cloud, customerName);
  await pairDevice(cloud.ctx, { customerId: customer.id, pairingCode: response.pairing_code });
  return {
    deviceId: response.device_id,
    numbers: { gate: numberOf('gate'), garage: numberOf('garage') },
    driver,
    customer,
    async stop() {
      await controller.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The customer opens the request's link, continues, and grants both objects until withdrawn. */
export async function grantRequest(barrier: SimulatedBarrier, code: string): Promise<void> {
  const { client } = barrier.customer;
  await client.get(`/c/${code}`);
  const claimed = await client.post(`/c/${code}/claim`);
  if (claimed.status !== 303) throw new Error(`claim answered ${claimed.status}`);
  await client.get(`/c/${code}`);
  const granted = await client.post(`/c/${code}/grant`, {
    object: [String(barrier.numbers.gate), String(barrier.numbers.garage)],
    lifetime: 'withdrawn',
  });
  if (granted.status !== 303) throw new Error(`grant answered ${granted.status}`);
}

/** The customer withdraws the key from the barrier's page. */
export async function withdrawKey(barrier: SimulatedBarrier, keyRef: number): Promise<void> {
  const { client } = barrier.customer;
  await client.get(`/barriers/${barrier.deviceId}`);
  const withdrawn = await client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`);
  if (withdrawn.status !== 303) throw new Error(`withdraw answered ${withdrawn.status}`);
}

async function waitUntilOnline(cloud: TestCloud, deviceId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await cloud.ops('GET', '/ops/devices');
    const devices = answer.body.devices as { id: string; online: boolean }[];
    if (devices.find((d) => d.id === deviceId)?.online) return;
    if (Date.now() > deadline) throw new Error(`the controller ${deviceId} did not come online`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

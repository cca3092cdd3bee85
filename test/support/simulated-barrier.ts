import { rm } from 'node:fs/promises';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import type { SimulatedDriver } from '../../device/drivers/simulated.js';
import type { BrowserClient } from './browser-client.js';
import type { TestCloud } from './cloud.js';
import { signedInCustomer } from './customer-app.js';
import { provisionedConfig, startSimulatedController } from './provisioned-gate.js';

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
  const { dir, configPath, response, numberOf } = await provisionedConfig(cloud, OBJECTS_YAML);
  const { controller, driver } = await startSimulatedController(cloud, configPath);
  const customer = await signedInCustomer(cloud, customerName);
  await pairDevice(cloud.ctx, { customerId: customer.id, pairingCode: response.pairing_code! });
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

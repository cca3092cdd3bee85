import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller, type ControllerDeps } from '../../device/runtime/controller.js';
import { type Answer, secretCompany, type TestCloud } from './cloud.js';
import { waitFor } from './wait-for.js';

/**
 * A gate as an installer and a customer leave it: a controller config written by `provision()` against the
 * cloud's HTTP address (one simulated object, `gate`), paired to a customer, and a company with a secret that
 * gets keys on it as a customer grants them. The controller runs in this process (`startController`) or as a
 * process of its own (controller-process.ts, on `configPath`).
 */
export interface ProvisionedGate {
  readonly configPath: string;
  readonly deviceId: string;
  readonly numberId: number;
  /** A fresh key on the gate: requested by the company, claimed and granted by the customer. */
  newKey(): Promise<number>;
  /** `a=open` on the gate with the key. */
  open(keyRef: number, headers?: Record<string, string>): Promise<Answer>;
  /** The controller daemon in this process, resolved once the cloud sees it online. */
  startController(): Promise<Controller>;
  /** Polls the operator API until the device is online (or not). */
  waitOnline(online?: boolean): Promise<void>;
  remove(): Promise<void>;
}

const OBJECTS_YAML = `
objects:
  - id: gate
    label: Main gate
    kind: simulated
    pulse_ms: 0
clock:
  check: none
`;

/** A controller config written by `provision()` against the cloud's HTTP address, as an installer does. */
export async function provisionedConfig(cloud: TestCloud, objectsYaml: string) {
  const dir = await mkdtemp(join(tmpdir(), 'gatelink-gate-'));
  const created = await cloud.ops('POST', '/ops/devices', { label: 'Yard' });
  if (created.status !== 200) throw new Error(`device add failed: ${JSON.stringify(created.body)}`);
  const device = created.body.device as { device_id: string; provisioning_code: string };
  const objectsFile = join(dir, 'objects.yaml');
  await writeFile(objectsFile, objectsYaml);
  const configPath = join(dir, 'device.yaml');
  const { response } = await provision({
    cloud: cloud.baseUrl,
    code: device.provisioning_code,
    configPath,
    objectsFrom: objectsFile,
  });
  const numberOf = (id: string) => response.numbers.find((n) => n.id === id)!.number_id;
  return { dir, configPath, response, numberOf };
}

/**
 * The controller daemon in this process on simulated outputs, resolved once the cloud sees it online; `deps`
 * replaces what a test needs to (its wall clock, say).
 */
export async function startSimulatedController(
  cloud: TestCloud,
  configPath: string,
  deps: ControllerDeps = {},
) {
  const config = loadConfig(configPath);
  const driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
  const controller = new Controller(config, {
    drivers: { simulated: driver },
    reconnectMinMs: 50,
    log: () => {},
    ...deps,
  });
  await controller.start();
  await waitDeviceOnline(cloud, config.device_id);
  return { controller, driver };
}

/** Polls the operator API until the device is online (or not). */
export function waitDeviceOnline(cloud: TestCloud, deviceId: string, online = true): Promise<void> {
  return waitFor(
    async () => {
      const answer = await cloud.ops('GET', '/ops/devices');
      const devices = answer.body.devices as { id: string; online: boolean }[];
      return devices.find((d) => d.id === deviceId)?.online === online;
    },
    `the controller ${deviceId} to be ${online ? 'online' : 'offline'}`,
  );
}

/** `objectsYaml`: the gate's objects file, one object `gate` (a simulated one when not given). */
export async function provisionGate(cloud: TestCloud, objectsYaml = OBJECTS_YAML): Promise<ProvisionedGate> {
  const { dir, configPath, response, numberOf } = await provisionedConfig(cloud, objectsYaml);
  const numberId = numberOf('gate');
  const customerId = (await createCustomer(cloud.ctx, { displayName: 'Gate Customer' })).id;
  await pairDevice(cloud.ctx, { customerId, pairingCode: response.pairing_code! });
  const company = await secretCompany(cloud, 'Gate Couriers');
  const deviceId = response.device_id;
  const waitOnline = (online = true) => waitDeviceOnline(cloud, deviceId, online);
  return {
    configPath,
    deviceId,
    numberId,
    async newKey() {
      const answer = await cloud.call('request', company);
      const code = answer.body.code as string;
      await claimRequest(cloud.ctx, { code, customerId });
      const issued = await issueAccessKey(cloud.ctx, {
        code,
        customerId,
        deviceId,
        objectIds: [numberId],
        keyExpiresAt: null,
      });
      return issued.keyRef;
    },
    open: (keyRef, headers) =>
      cloud.call('open', { ...company, key_ref: keyRef, number_id: numberId, actor: 'Driver 7' }, headers),
    async startController() {
      return (await startSimulatedController(cloud, configPath)).controller;
    },
    waitOnline,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

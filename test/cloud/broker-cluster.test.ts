import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import { brokerKindSkipReason, clusterEnv } from '../support/broker-env.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startRabbitCluster, type TestRabbitCluster } from '../support/rabbitmq-cluster.js';
import { waitFor } from '../support/wait-for.js';

/*
 * What only a broker cluster has: two cloud instances on one database, each reaching the cluster through
 * another node first, and real controllers spread over the three nodes; then one node dies (docs/design.md
 * section 7.2). Reconnections use short injected delays; nothing here measures time.
 */
const skip = brokerKindSkipReason('cluster');
const PREFIX = 'cl/gl';
const ACK_TIMEOUT_MS = 2000;
const OBJECTS_YAML =
  'objects:\n  - id: gate\n    label: Gate\n    kind: simulated\n    pulse_ms: 0\nclock:\n  check: none\n';

interface Barrier {
  id: string;
  node: number;
  numberId: number;
  keyRef: number;
  driver: SimulatedDriver;
  controller: Controller;
}

describe.skipIf(skip !== null)(`two cloud instances on a RabbitMQ cluster${skip ? ` (${skip})` : ''}`, () => {
  let database: TestDatabase;
  let cluster: TestRabbitCluster;
  let instances: TestCloud[];
  let dir: string;
  let company: { org_id: number; secret: string };
  const barriers: Barrier[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    cluster = await startRabbitCluster(PREFIX);
    dir = await mkdtemp(join(tmpdir(), 'gatelink-cluster-'));
    const env = { MQTT_TOPIC_PREFIX: PREFIX, OPEN_RATE_LIMIT: '10000' };
    const first = await startTestCloud({
      database,
      ackTimeoutMs: ACK_TIMEOUT_MS,
      env: { ...env, ...clusterEnv(cluster, 0) },
    });
    // The instances sign commands with one key, as instances reading one key file do in production.
    const second = await startTestCloud({
      database,
      ackTimeoutMs: ACK_TIMEOUT_MS,
      env: { ...env, ...clusterEnv(cluster, 1), SIGNING_KEY_FILE: first.ctx.config.serviceKeyFile },
    });
    instances = [first, second];
    company = await secretCompany(first, 'Courier Ltd');
    const customerId = (await createCustomer(first.ctx, { displayName: 'Eva Customer' })).id;
    for (const node of [0, 1, 2]) barriers.push(await barrierOn(node, customerId));
  });

  afterAll(async () => {
    for (const barrier of barriers) await barrier.controller.stop();
    for (const instance of instances ?? []) await instance.stop();
    await cluster?.stop();
    await database?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A controller provisioned through the first instance, reaching the cluster through `node` first. */
  async function barrierOn(node: number, customerId: number): Promise<Barrier> {
    const cloud = instances[0]!;
    const created = await cloud.ops('POST', '/ops/devices', { label: `Yard ${node}` });
    const device = created.body.device as { device_id: string; provisioning_code: string };
    const objectsFile = join(dir, `objects-${node}.yaml`);
    await writeFile(objectsFile, OBJECTS_YAML);
    const configPath = join(dir, `device-${node}.yaml`);
    const { response } = await provision({
      cloud: cloud.baseUrl,
      code: device.provisioning_code,
      configPath,
      objectsFrom: objectsFile,
    });
    // The cloud lists every node from the first; this controller starts from its own node.
    const provisioned = loadConfig(configPath);
    expect(provisioned.mqtt.url).toBe(cluster.deviceUrl(0));
    const config = {
      ...provisioned,
      mqtt: { ...provisioned.mqtt, url: cluster.deviceUrl(node), reconnect_max_ms: 200 },
    };
    const driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    const controller = new Controller(config, {
      drivers: { simulated: driver },
      reconnectMinMs: 50,
      log: () => {},
    });
    await controller.start();
    await pairDevice(cloud.ctx, { customerId, pairingCode: response.pairing_code! });
    const request = await cloud.call('request', company);
    await claimRequest(cloud.ctx, { code: request.body.code as string, customerId });
    const numberId = response.numbers[0]!.number_id;
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code: request.body.code as string,
      customerId,
      deviceId: response.device_id,
      objectIds: [numberId],
      keyExpiresAt: null,
    });
    const barrier = { id: response.device_id, node, numberId, keyRef, driver, controller };
    await waitFor(() => controller.session.connected, `the controller on node ${node} to connect`, 20_000);
    return barrier;
  }

  function open(instance: TestCloud, barrier: Barrier, actor: string): Promise<Answer> {
    return instance.call('open', { ...company, key_ref: barrier.keyRef, number_id: barrier.numberId, actor });
  }

  /** The journal rows of a barrier once none is pending (the ack's outcome lands a moment after the answer). */
  async function journal(barrier: Barrier) {
    let rows: { id: number; outcome: string | null; actor: string }[] = [];
    await waitFor(
      async () => {
        rows = await database.db
          .selectFrom('journal')
          .select(['id', 'outcome', 'actor'])
          .where('device_id', '=', barrier.id)
          .orderBy('id')
          .execute();
        return rows.every((row) => row.outcome !== null);
      },
      'every journal entry to have its outcome',
      20_000,
    );
    return rows;
  }

  it('opens through either instance a barrier on any node, each once', async () => {
    for (const [i, instance] of instances.entries()) {
      for (const barrier of barriers) {
        const before = barrier.driver.pulses.get('gate') ?? 0;
        const answer = await open(instance, barrier, `instance ${i}`);
        expect({ node: barrier.node, instance: i, status: answer.status }).toEqual({
          node: barrier.node,
          instance: i,
          status: 200,
        });
        expect(barrier.driver.pulses.get('gate')).toBe(before + 1);
      }
    }
    for (const barrier of barriers) {
      expect((await journal(barrier)).map((row) => row.outcome)).toEqual(['opened', 'opened']);
    }
  });

  it('goes on opening when a node dies: its controller and cloud instance move to another, nothing lost or doubled', async () => {
    const answers = new Map<string, Answer[]>(barriers.map((b) => [b.id, []]));
    const pulsesBefore = new Map(barriers.map((b) => [b.id, b.driver.pulses.get('gate') ?? 0]));
    const rowsBefore = new Map<string, number>();
    for (const barrier of barriers) rowsBefore.set(barrier.id, (await journal(barrier)).length);
    let round = 0;
    const openRound = async () => {
      for (const barrier of barriers) {
        const answer = await open(instances[round % 2]!, barrier, `round ${round}`);
        answers.get(barrier.id)!.push(answer);
      }
      round++;
    };
    await openRound();
    // Node 0 holds the first instance's connection and the first controller's.
    await cluster.kill(0);
    // Opens go on until every barrier has opened through each instance after the loss.
    const openedSince = () =>
      barriers.every((barrier) => {
        const after = answers.get(barrier.id)!.slice(1);
        return after.filter((answer) => answer.status === 200).length >= 2;
      });
    const deadline = Date.now() + 30_000;
    while (!openedSince()) {
      if (Date.now() > deadline) throw new Error('the barriers did not all open again after the node died');
      await openRound();
    }

    for (const barrier of barriers) {
      const said = answers.get(barrier.id)!;
      // Every open was answered with success or a documented failure, never an internal error.
      for (const answer of said) expect([200, 503, 504]).toContain(answer.status);
      // Each request left one journal row with an outcome; the gate moved once per opened row.
      const rows = (await journal(barrier)).slice(rowsBefore.get(barrier.id));
      expect(rows).toHaveLength(said.length);
      const opened = rows.filter((row) => row.outcome === 'opened').length;
      expect(opened).toBeGreaterThanOrEqual(said.filter((answer) => answer.status === 200).length);
      expect((barrier.driver.pulses.get('gate') ?? 0) - pulsesBefore.get(barrier.id)!).toBe(opened);
    }
    // The controller of the dead node reconnected, through another node.
    expect(barriers[0]!.controller.session.connected).toBe(true);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControllerLink } from '../../cloud/links/controllers/start.js';
import {
  BrokerEnv,
  brokerKindSkipReason,
  dispatch,
  dispatchRequest,
  insertOpenEntry,
  journalState,
} from '../support/broker-env.js';
import { waitFor } from '../support/wait-for.js';

/* What only the external broker has: several cloud instances on one database and one Mosquitto. */
const skip = brokerKindSkipReason('external');

describe.skipIf(skip !== null)(`the external broker${skip ? ` (${skip})` : ''}`, () => {
  let env: BrokerEnv;

  beforeAll(async () => {
    env = await BrokerEnv.open('external');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('lets two cloud instances each open through the broker, each acknowledgement applied once', async () => {
    const first = await env.start({ ackTimeoutMs: 3000 });
    const second = await env.start({ ackTimeoutMs: 3000 });
    const device = await env.connect(first, await env.provision(first));
    await env.waitOnline(device.id);
    for (const instance of [first, second, first]) {
      const entry = await insertOpenEntry(env.db, device.id);
      const result = dispatch(instance, dispatchRequest(device.id, entry));
      const ack = await device.ack(await device.nextCommand());
      expect(await result).toEqual({ kind: 'acked', ack });
      await waitFor(
        async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
        'the acknowledgement in the journal',
      );
      // Both instances received the ack; the journal and the company's events show it once.
      await env.roundTrip(device);
      expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
    }
  });

  it('gives devices the broker URL without the cloud credentials', async () => {
    const broker = await env.start();
    expect(broker.deviceUrl).toBe(env.mosquitto?.deviceUrl);
    expect(broker.deviceUrl).not.toContain('cloud');
  });

  it('refuses to start with a wrong cloud password, saying so', async () => {
    const url = new URL(env.mosquitto?.cloudUrl ?? '');
    url.password = 'wrong';
    await expect(startControllerLink(env.context({ MQTT_URL: url.toString() }))).rejects.toThrow(
      /refused the cloud's account in MQTT_URL/,
    );
  });
});

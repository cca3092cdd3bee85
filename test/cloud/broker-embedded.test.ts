import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Client, PublishPacket } from 'aedes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceAccessHooks } from '../../cloud/links/controllers/embedded-access.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { BrokerEnv, PREFIX } from '../support/broker-env.js';
import { newDeviceId } from '../support/fake-device.js';

/* What only the embedded broker has: its address, and wills aedes publishes with no client. */
describe('the embedded broker', () => {
  let env: BrokerEnv;

  beforeAll(async () => {
    env = await BrokerEnv.open('embedded');
  });
  afterAll(async () => {
    await env?.close();
  });

  it('reports the port it got in deviceUrl, on the host of the base URL', async () => {
    const broker = await env.start();
    const url = new URL(broker.deviceUrl);
    expect(url.protocol).toBe('mqtt:');
    expect(url.hostname).toBe('127.0.0.1');
    expect(Number(url.port)).toBeGreaterThan(0);
  });

  it('reports MQTT_PUBLIC_URL when it is set', async () => {
    const broker = await env.start({}, { MQTT_PUBLIC_URL: 'mqtts://gate.example.com:8883' });
    expect(broker.deviceUrl).toBe('mqtts://gate.example.com:8883');
  });

  describe('a will published with no client', () => {
    const hooks = () => deviceAccessHooks(env.context(), async () => undefined);
    const authorize = (packet: PublishPacket, client: Client | null = null) =>
      new Promise<boolean>((done) => hooks().authorizePublish(client, packet, (error) => done(!error)));
    const will = (topic: string, clientId?: string): PublishPacket => ({
      cmd: 'publish',
      topic,
      payload: Buffer.from('{}'),
      qos: 1,
      retain: true,
      dup: false,
      ...(clientId ? { clientId } : {}),
    });
    const id = newDeviceId();

    it("is published when it is its device's own state", async () => {
      expect(await authorize(will(deviceTopic(PREFIX, id, 'state'), id))).toBe(true);
    });

    it("is refused on another device's topic, on cmd, or without a device behind it", async () => {
      const other = newDeviceId();
      expect(await authorize(will(deviceTopic(PREFIX, other, 'state'), id))).toBe(false);
      expect(await authorize(will(deviceTopic(PREFIX, id, 'cmd'), id))).toBe(false);
      expect(await authorize(will(deviceTopic(PREFIX, id, 'state')))).toBe(false);
      expect(await authorize(will(deviceTopic(PREFIX, id, 'state'), '+'))).toBe(false);
    });
  });

  describe('a publish the rules allow', () => {
    const id = newDeviceId();
    const client = { id } as Client;
    const ack: PublishPacket = {
      cmd: 'publish',
      topic: deviceTopic(PREFIX, id, 'ack'),
      payload: Buffer.from('{}'),
      qos: 1,
      retain: false,
      dup: false,
    };

    it('is answered only once the cloud has taken it', async () => {
      let take!: () => void;
      const taken = new Promise<void>((resolve) => {
        take = resolve;
      });
      const hooks = deviceAccessHooks(env.context(), () => taken);
      let answered: boolean | null = null;
      hooks.authorizePublish(client, ack, (error) => {
        answered = !error;
      });
      await nextTurn();
      expect(answered).toBeNull();
      take();
      await taken;
      await nextTurn();
      expect(answered).toBe(true);
    });

    it('is refused when the cloud could not take it, so that the device sends it again', async () => {
      const hooks = deviceAccessHooks(env.context(), () => Promise.reject(new Error('database unavailable')));
      const answered = await new Promise<boolean>((done) =>
        hooks.authorizePublish(client, ack, (error) => done(!error)),
      );
      expect(answered).toBe(false);
    });
  });
});

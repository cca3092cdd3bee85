import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandWaiters } from '../../cloud/links/controllers/command-waiters.js';
import { DeviceMessages } from '../../cloud/links/controllers/device-messages.js';
import {
  type BrokerTransport,
  type DeviceMessage,
  NotConnectedError,
} from '../../cloud/links/controllers/transport.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { signAck } from '../../shared/protocol/signing.js';
import { deviceTopic, parseDeviceTopic } from '../../shared/protocol/topics.js';
import {
  BROKER_KINDS,
  BrokerEnv,
  brokerKindSkipReason,
  insertOpenEntry,
  journalState,
  PREFIX,
} from '../support/broker-env.js';
import { type DeviceAccount, type FakeDevice, tryConnect } from '../support/fake-device.js';
import { RefusingListener } from '../support/refusing-listener.js';
import { waitFor } from '../support/wait-for.js';

/*
 * The promises of BrokerTransport (cloud/links/controllers/transport.ts), written once and kept by both transports, as
 * MQTT.js runs one store suite against every store. The cloud's own listener sits behind a RefusingListener,
 * which rejects chosen messages as the cloud does when the journal cannot take an ack.
 */

/** Short, so that a refused message comes back at once; the real delays are in cloud/links/controllers/redelivery-backoff.ts. */
const REDELIVERY_DELAYS = { firstMs: 10, maxMs: 80 };

describe.each(BROKER_KINDS)('the %s transport', (kind) => {
  const skip = brokerKindSkipReason(kind);
  if (skip) {
    it.skip(skip, () => {});
    return;
  }

  let env: BrokerEnv;
  let listener: RefusingListener;
  let transport: BrokerTransport;

  /** A transport whose messages go through a RefusingListener to the cloud's own handlers. */
  async function startListened(): Promise<{ listener: RefusingListener; transport: BrokerTransport }> {
    const messages = new DeviceMessages(env.context(), new CommandWaiters());
    const refusing = new RefusingListener(messages.receive);
    const started = await env.startTransport(refusing.receive, { redeliveryDelays: REDELIVERY_DELAYS });
    return { listener: refusing, transport: started };
  }

  beforeAll(async () => {
    env = await BrokerEnv.open(kind);
    ({ listener, transport } = await startListened());
  });
  afterAll(async () => {
    await env?.close();
  });

  /** A device connected to the transport's broker, keeping its unacknowledged messages across reconnections. */
  async function connectedDevice(): Promise<FakeDevice> {
    const device = await env.connect(transport, await env.provision(transport), { reconnect: true });
    await env.waitOnline(device.id);
    return device;
  }

  /** A bare MQTT connection as the device, subscribed to its commands, recording what arrives. */
  async function commandSubscriber(account: DeviceAccount) {
    const connected = await tryConnect(transport.deviceUrl, {
      clientId: account.id,
      username: account.id,
      password: account.password,
    });
    if (!connected.ok) throw new Error(`the device could not connect: ${connected.code}`);
    const client: MqttClient = connected.client;
    const received: { payload: string; qos: number; retain: boolean }[] = [];
    client.on('message', (_topic, payload, packet) =>
      received.push({ payload: payload.toString(), qos: packet.qos, retain: packet.retain }),
    );
    await client.subscribeAsync(deviceTopic(PREFIX, account.id, 'cmd'), { qos: 1 });
    return { client, received };
  }

  /** A signed ack of the entry's command, as the controller publishes it. */
  function ackOf(account: DeviceAccount, commandId: string) {
    const now = Date.now();
    return signAck(account.key, {
      v: PROTOCOL_VERSION,
      command_id: commandId,
      device_id: account.id,
      outcome: 'opened',
      received_at: now,
      finished_at: now,
    });
  }

  const from = (deviceId: string, channel: string) => (message: DeviceMessage) => {
    const target = parseDeviceTopic(PREFIX, message.topic);
    return target?.deviceId === deviceId && target.channel === channel;
  };

  describe('isConnected', () => {
    it('is false for a device that never connected, true while it is connected, false once it is gone', async () => {
      const account = await env.provision(transport);
      expect(await transport.isConnected(account.id)).toBe(false);
      const device = await env.connect(transport, account);
      await waitFor(() => transport.isConnected(account.id), 'the device connected');
      device.vanish();
      await waitFor(async () => !(await transport.isConnected(account.id)), 'the device disconnected');
    });

    it('connectedDevices counts a device while it is connected, and no more once it is gone', async () => {
      const before = await transport.connectedDevices();
      const account = await env.provision(transport);
      const device = await env.connect(transport, account);
      await waitFor(() => transport.isConnected(account.id), 'the device connected again');
      expect(await transport.connectedDevices()).toBe(before + 1);
      device.vanish();
      await waitFor(async () => !(await transport.isConnected(account.id)), 'the device disconnected again');
      expect(await transport.connectedDevices()).toBe(before);
    });
  });

  describe('publish', () => {
    it('delivers at QoS 1 and does not retain', async () => {
      const account = await env.provision(transport);
      const first = await commandSubscriber(account);
      await transport.publish(deviceTopic(PREFIX, account.id, 'cmd'), Buffer.from('first'));
      await waitFor(() => first.received.length === 1, 'the first message');
      expect(first.received).toEqual([{ payload: 'first', qos: 1, retain: false }]);
      await first.client.endAsync();
      // A retained message would reach the next subscriber as it subscribes, before anything published later.
      const next = await commandSubscriber(account);
      await transport.publish(deviceTopic(PREFIX, account.id, 'cmd'), Buffer.from('second'));
      await waitFor(() => next.received.length > 0, 'a message on the next subscription');
      expect(next.received.map((message) => message.payload)).toEqual(['second']);
      await next.client.endAsync();
    });
  });

  describe('addDevice and removeDevice', () => {
    it('addDevice creates the account, and replacing it ends the session opened with the former password', async () => {
      const account = await env.provision(transport);
      const device = await env.connect(transport, account);
      const closed = device.closed();
      await transport.addDevice(account.id, 'the-new-password-of-this-device');
      await closed;
      const old = await tryConnect(transport.deviceUrl, {
        clientId: account.id,
        username: account.id,
        password: account.password,
      });
      expect(old.ok).toBe(false);
      const renewed = await env.connect(transport, {
        ...account,
        password: 'the-new-password-of-this-device',
      });
      expect(renewed.client.connected).toBe(true);
    });

    it('removeDevice ends the session and refuses the account', async () => {
      const account = await env.provision(transport);
      const device = await env.connect(transport, account);
      const closed = device.closed();
      await transport.removeDevice(account.id);
      await closed;
      const result = await tryConnect(transport.deviceUrl, {
        clientId: account.id,
        username: account.id,
        password: account.password,
      });
      expect(result.ok).toBe(false);
    });
  });

  describe('the acknowledgement promise', () => {
    it('an ack the listener rejects reaches it again, and is applied once', async () => {
      const device = await connectedDevice();
      const entry = await insertOpenEntry(env.db, device.id);
      const isAck = from(device.id, 'ack');
      listener.refuse(isAck);
      await device.publish('ack', ackOf(device.account, entry.commandId));
      await waitFor(
        async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
        'the acknowledgement in the journal',
      );
      const handed = listener.handed.filter(isAck);
      expect(handed).toHaveLength(2);
      expect(handed[1]?.payload).toEqual(handed[0]?.payload);
      await env.roundTrip(device);
      expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
    });

    it('a message rejected several times in a row keeps coming until it is taken', async () => {
      const device = await connectedDevice();
      const entry = await insertOpenEntry(env.db, device.id);
      const isAck = from(device.id, 'ack');
      listener.refuse(isAck, 3);
      await device.publish('ack', ackOf(device.account, entry.commandId));
      await waitFor(
        async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
        'the acknowledgement in the journal',
      );
      expect(listener.handed.filter(isAck)).toHaveLength(4);
      expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
    });

    it("keeps a device's order: what it sent after a rejected message is taken after it", async () => {
      const device = await connectedDevice();
      const entry = await insertOpenEntry(env.db, device.id);
      const isAck = from(device.id, 'ack');
      const isTelemetry = from(device.id, 'telemetry');
      listener.refuse(isAck);
      await Promise.all([
        device.publish('ack', ackOf(device.account, entry.commandId)),
        device.publishTelemetry(1),
        device.publishTelemetry(2),
      ]);
      await waitFor(() => listener.taken.filter(isTelemetry).length >= 2, 'two telemetry messages');
      const taken = listener.taken.filter((message) => isAck(message) || isTelemetry(message));
      expect(taken.map((message) => parseDeviceTopic(PREFIX, message.topic)?.channel)).toEqual([
        'ack',
        'telemetry',
        'telemetry',
      ]);
      expect(taken.slice(1).map((message) => JSON.parse(message.payload.toString()).uptime_s)).toEqual([
        1, 2,
      ]);
    });
  });

  describe('stop', () => {
    it('ends delivery and the connections it holds, and the link; publish then rejects with NotConnectedError', async () => {
      const other = await startListened();
      const device = await env.connect(other.transport, await env.provision(other.transport));
      await waitFor(
        () => other.listener.taken.some(from(device.id, 'state')),
        'the state on the other listener',
      );
      const closed = device.closed();
      expect(other.transport.linked()).toBe(true);
      await env.stopTransport(other.transport);
      expect(other.transport.linked()).toBe(false);
      await expect(
        other.transport.publish(deviceTopic(PREFIX, device.id, 'cmd'), Buffer.from('late')),
      ).rejects.toBeInstanceOf(NotConnectedError);
      if (kind === 'embedded') {
        // The devices' connections are the transport's own.
        await closed;
      } else {
        // The devices' connections are Mosquitto's; the stopped instance hears nothing more of them.
        await device.publishTelemetry(7);
        await waitFor(() => listener.taken.some(from(device.id, 'telemetry')), 'the telemetry');
        expect(other.listener.handed.filter(from(device.id, 'telemetry'))).toEqual([]);
      }
    });
  });
});

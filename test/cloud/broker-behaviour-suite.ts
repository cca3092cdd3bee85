import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerLink } from '../../cloud/links/controllers/controller-link.js';
import { completeEntry } from '../../cloud/rules/journal/journal.js';
import { COMMAND_LIFETIME_MS } from '../../cloud/rules/opening/dispatcher.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { signAck } from '../../shared/protocol/signing.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import {
  BrokerEnv,
  brokerKindSkipReason,
  type CLUSTER_KINDS,
  dispatch,
  dispatchRequest,
  insertOpenEntry,
  journalState,
  PREFIX,
} from '../support/broker-env.js';
import { type FakeDevice, insertDevice, tryConnect } from '../support/fake-device.js';
import { waitFor } from '../support/wait-for.js';

/*
 * The controller link as devices and the open flow see it, written once and run against the embedded
 * broker, an external Mosquitto (broker-behaviour.test.ts) and a three-node RabbitMQ cluster
 * (broker-behaviour-cluster.test.ts, a file of its own so that its slow start runs beside the others). Attacks
 * are tried by devices that hold valid accounts of their own.
 */
/**
 * How long an instance waits for an acknowledgement: generous, since every ack these tests send must arrive in
 * time on a busy machine. The one test of a missed deadline has an instance of its own with a short one.
 */
const ACK_TIMEOUT_MS = 10_000;
/** The deadline of that instance: its device acknowledges only once the dispatch timed out, so nothing races it. */
const MISSED_ACK_TIMEOUT_MS = 200;

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * The suite for one kind of broker. `startTimeoutMs`: how long starting it may take (three RabbitMQ nodes take
 * far longer than one broker on a busy machine); `testTimeoutMs`: each test's ceiling, where a session ended by
 * one node reaches the others slowly on a busy machine.
 */
export function brokerBehaviour(
  kind: (typeof CLUSTER_KINDS)[number],
  startTimeoutMs?: number,
  testTimeoutMs?: number,
): void {
  describe(`the ${kind} broker`, testTimeoutMs === undefined ? {} : { timeout: testTimeoutMs }, () => {
    const skip = brokerKindSkipReason(kind);
    if (skip) {
      it.skip(skip, () => {});
      return;
    }

    let env: BrokerEnv;
    let broker: ControllerLink;

    beforeAll(async () => {
      env = await BrokerEnv.open(kind);
      broker = await env.start({ ackTimeoutMs: ACK_TIMEOUT_MS });
    }, startTimeoutMs);
    afterAll(async () => {
      await env?.close();
    });

    const onlineDevice = () => env.onlineDevice(broker);

    const roundTrip = (device: FakeDevice) => env.roundTrip(device);

    /**
     * A publish the broker must refuse, then a sign that it was handled: the embedded broker closes the
     * connection, Mosquitto drops the message and the attacker's next one comes through. Then a short pause
     * for anything wrongly forwarded to reach its subscriber.
     */
    async function attempt(
      attacker: FakeDevice,
      topic: string,
      payload: string,
      retain = false,
    ): Promise<void> {
      const closed = attacker.closed();
      attacker.client.publish(topic, payload, { qos: 1, retain }, () => {});
      await Promise.race([closed, roundTrip(attacker).catch(() => closed)]);
      await pause(150);
    }

    /**
     * Whether the broker granted the subscription (MQTT 3.1.1 answers a refusal with 0x80; RabbitMQ 3.10 closes
     * the connection instead).
     */
    async function mayReceive(client: MqttClient, filter: string): Promise<boolean> {
      // mqtt.js does not settle a subscription whose connection the broker closed: the close answers it.
      const closed = new Promise<'closed'>((done) => client.once('close', () => done('closed')));
      try {
        const answer = await Promise.race([client.subscribeAsync(filter, { qos: 1 }), closed]);
        if (answer === 'closed') return kind !== 'cluster';
        const [grant] = answer;
        return grant !== undefined && grant.qos !== 128;
      } catch (error) {
        if (error instanceof Error && 'packet' in error) return false;
        throw error;
      }
    }

    const logsAbout = (deviceId: string) =>
      env.log.entries.filter((entry) => entry.fields.deviceId === deviceId);

    describe('commands and acknowledgements', () => {
      it('delivers a signed command and answers with the acknowledgement, applied to the journal once', async () => {
        const device = await onlineDevice();
        const entry = await insertOpenEntry(env.db, device.id);
        const result = dispatch(broker, dispatchRequest(device.id, entry));
        const command = await device.nextCommand();
        expect(command).toMatchObject({
          v: 1,
          id: entry.commandId,
          device_id: device.id,
          object: 'gate',
          number_id: entry.objectId,
          action: 'open',
        });
        expect(command.expires_at - command.issued_at).toBe(COMMAND_LIFETIME_MS);
        const ack = await device.ack(command);
        expect(await result).toEqual({ kind: 'acked', ack });
        await waitFor(
          async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
          'the acknowledgement in the journal',
        );
        expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
      });

      it('passes on a failure the controller reports, with its reason', async () => {
        const device = await onlineDevice();
        const entry = await insertOpenEntry(env.db, device.id);
        const result = dispatch(broker, dispatchRequest(device.id, entry));
        await device.ack(await device.nextCommand(), 'failed', { reason: 'relay_fault' });
        const answer = await result;
        expect(answer.kind === 'acked' && answer.ack.reason).toBe('relay_fault');
        await waitFor(
          async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
          'the acknowledgement in the journal',
        );
        expect(await journalState(env.db, entry.journalId)).toMatchObject({
          outcome: 'device_error',
          detail: 'relay_fault',
        });
      });

      it('answers offline for a device that is not connected, and sends it nothing', async () => {
        const device = await onlineDevice();
        device.vanish();
        await env.waitOnline(device.id, false);
        const entry = await insertOpenEntry(env.db, device.id);
        expect(await dispatch(broker, dispatchRequest(device.id, entry))).toEqual({ kind: 'offline' });
        const back = await env.connect(broker, device.account);
        await roundTrip(back);
        await pause(150);
        expect([...back.commands, ...back.unverified]).toEqual([]);
        const never = await insertDevice(env.db);
        const other = await insertOpenEntry(env.db, never.id);
        expect(await dispatch(broker, dispatchRequest(never.id, other))).toEqual({ kind: 'offline' });
      });

      it('still applies an acknowledgement that arrives after the timeout', async () => {
        const hasty = await env.start({ ackTimeoutMs: MISSED_ACK_TIMEOUT_MS });
        const device = await env.onlineDevice(hasty);
        const entry = await insertOpenEntry(env.db, device.id);
        const result = dispatch(hasty, dispatchRequest(device.id, entry));
        const command = await device.nextCommand();
        expect(await result).toEqual({ kind: 'timeout' });
        // What the open flow records on a timeout.
        await completeEntry(
          env.db,
          { id: entry.journalId },
          { outcome: 'device_timeout', detail: null, ackedAt: null, now: new Date() },
        );
        await device.ack(command);
        await waitFor(
          async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
          'the acknowledgement in the journal',
        );
        // The other tests count what one instance hears.
        await env.stopBroker(hasty);
        const journal = await journalState(env.db, entry.journalId);
        expect(journal.outcome).toBe('opened');
        expect(journal.detail).toContain("acknowledged after the caller's timeout");
      });

      it('[attack:mqtt.forged-ack] does not apply a forged acknowledgement (signed with another key)', async () => {
        const device = await onlineDevice();
        const entry = await insertOpenEntry(env.db, device.id);
        const result = dispatch(broker, dispatchRequest(device.id, entry));
        const command = await device.nextCommand();
        await device.ack(command, 'failed', { reason: 'relay_fault', key: SigningKey.generate() });
        await roundTrip(device);
        expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: null, acked_at: null });
        expect(logsAbout(device.id).map((log) => log.msg)).toContain(
          'dropped an acknowledgement with a bad signature',
        );
        const genuine = await device.ack(command);
        expect(await result).toEqual({ kind: 'acked', ack: genuine });
        await waitFor(
          async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
          'the acknowledgement in the journal',
        );
        expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
      });

      it('drops a signed acknowledgement timed after year 9999, and the device stays connected', async () => {
        // Found by test/fuzz/device-messages.test.ts: PGlite cannot store such a time, so the journal write failed
        // after the caller had been answered, and the embedded broker refused the publish: the controller would
        // have sent it again on every connection, forever.
        const device = await onlineDevice();
        const entry = await insertOpenEntry(env.db, device.id);
        const result = dispatch(broker, dispatchRequest(device.id, entry));
        const command = await device.nextCommand();
        const late = signAck(device.account.key, {
          v: 1,
          command_id: command.id,
          device_id: device.id,
          outcome: 'opened',
          received_at: Date.now(),
          finished_at: Date.UTC(10_000, 0, 1),
        });
        await device.publish('ack', late);
        await roundTrip(device);
        expect(logsAbout(device.id).map((line) => line.msg)).toContain('dropped a malformed acknowledgement');
        expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: null, acked_at: null });
        const genuine = await device.ack(command);
        expect(await result).toEqual({ kind: 'acked', ack: genuine });
      });

      it('[attack:mqtt.forged-ack] applies a replayed acknowledgement once', async () => {
        const device = await onlineDevice();
        const entry = await insertOpenEntry(env.db, device.id);
        const result = dispatch(broker, dispatchRequest(device.id, entry));
        const ack = await device.ack(await device.nextCommand());
        await result;
        await device.publish('ack', ack);
        await device.publish('ack', ack);
        await roundTrip(device);
        expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
      });

      it('handles each message a device publishes once', async () => {
        const device = await onlineDevice();
        const entry = await insertOpenEntry(env.db, device.id);
        const result = dispatch(broker, dispatchRequest(device.id, entry));
        await device.ack(await device.nextCommand());
        await result;
        await device.publish('ack', { not: 'an acknowledgement' });
        await roundTrip(device);
        const said = logsAbout(device.id).map((line) => line.msg);
        expect(said.filter((msg) => msg === 'acknowledgement')).toHaveLength(1);
        expect(said.filter((msg) => msg === 'dropped a malformed acknowledgement')).toHaveLength(1);
      });

      it("does not let a device acknowledge another device's command", async () => {
        const [mallory, victim] = [await onlineDevice(), await onlineDevice()];
        const entry = await insertOpenEntry(env.db, victim.id);
        const result = dispatch(broker, dispatchRequest(victim.id, entry));
        const command = await victim.nextCommand();
        // Signed by mallory, naming mallory, on mallory's own topic: a real ack, for a command not sent to it.
        await mallory.ack(command);
        await roundTrip(mallory);
        expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: null, acked_at: null });
        const genuine = await victim.ack(command);
        expect(await result).toEqual({ kind: 'acked', ack: genuine });
      });

      it("[attack:mqtt.phone-ack-other-device] does not let a phone controller acknowledge another controller's command as a call", async () => {
        const [phone, victim] = [await onlineDevice(), await onlineDevice()];
        await phone.publishState(true, [{ id: 'gate', label: 'Phone gate', kind: 'phone' }]);
        const entry = await insertOpenEntry(env.db, victim.id);
        const result = dispatch(broker, dispatchRequest(victim.id, entry));
        const command = await victim.nextCommand();
        const now = Date.now();
        const unsigned = {
          v: 1,
          command_id: command.id,
          outcome: 'opened',
          received_at: now,
          finished_at: now,
        } as const;
        // Naming the other controller, signed with the phone's own key, on the phone's topic: a foreign message.
        await phone.publish(
          'ack',
          signAck(phone.account.key, { ...unsigned, device_id: victim.id, call: 'answered' }),
        );
        // Naming itself, for a command that was never its own.
        await phone.publish(
          'ack',
          signAck(phone.account.key, { ...unsigned, device_id: phone.id, call: 'answered' }),
        );
        await roundTrip(phone);
        expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: null, acked_at: null });
        const genuine = await victim.ack(command);
        expect(await result).toEqual({ kind: 'acked', ack: genuine });
      });
    });

    describe('state and telemetry', () => {
      it('keeps online, version and the objects with stable numbers', async () => {
        const device = await onlineDevice();
        const objects = async () =>
          env.db
            .selectFrom('device_objects')
            .select(['id', 'local_id', 'label', 'removed_at'])
            .where('device_id', '=', device.id)
            .orderBy('local_id')
            .execute();
        const gate = { id: 'gate', label: 'Front gate', kind: 'relay' } as const;
        const door = { id: 'door', label: 'Side door', kind: 'relay' } as const;
        await device.publishState(true, [gate, door]);
        await roundTrip(device);
        const first = await objects();
        expect(first.map((row) => [row.local_id, row.removed_at])).toEqual([
          ['door', null],
          ['gate', null],
        ]);
        await device.publishState(true, [{ ...gate, label: 'Main gate' }]);
        await roundTrip(device);
        const second = await objects();
        expect(second.map((row) => row.id)).toEqual(first.map((row) => row.id));
        expect(second[0]?.removed_at).not.toBeNull();
        expect(second[1]?.label).toBe('Main gate');
        await device.publishState(true, [gate, door]);
        await roundTrip(device);
        const third = await objects();
        expect(third.map((row) => [row.id, row.removed_at])).toEqual(first.map((row) => [row.id, null]));
        const row = await env.db
          .selectFrom('devices')
          .select(['online', 'version', 'state_at'])
          .where('id', '=', device.id)
          .executeTakeFirstOrThrow();
        expect(row).toMatchObject({ online: true, version: '1.0.0' });
        expect(row.state_at).toBeInstanceOf(Date);
      });

      it('drops a state or telemetry with control characters or unpaired surrogates, one line each', async () => {
        // Found by test/fuzz/device-messages.test.ts: a NUL in a label or an unpaired surrogate in telemetry
        // made the database write fail (and the embedded broker close the connection); an escape sequence in a
        // label was stored and shown to the customer.
        const device = await onlineDevice();
        for (const label of ['Main\u0000gate', '\u001b[2JMain gate']) {
          await device.publishState(true, [{ id: 'gate', label, kind: 'relay' }]);
        }
        await device.publish('telemetry', {
          v: 1,
          device_id: device.id,
          at: Date.now(),
          uptime_s: 1,
          version: '1.0\ud800',
          signal: null,
          clock_synced: true,
          outbox: 0,
        });
        await roundTrip(device);
        const said = logsAbout(device.id).map((line) => line.msg);
        expect(said.filter((msg) => msg === 'dropped a malformed state')).toHaveLength(2);
        expect(said.filter((msg) => msg === 'dropped malformed telemetry')).toHaveLength(1);
        const labels = await env.db
          .selectFrom('device_objects')
          .select('label')
          .where('device_id', '=', device.id)
          .execute();
        expect(labels).toEqual([]);
      });

      it('stores the latest telemetry', async () => {
        const device = await onlineDevice();
        await device.publishTelemetry(4242);
        await waitFor(async () => {
          const row = await env.db
            .selectFrom('devices')
            .select(['telemetry', 'telemetry_at'])
            .where('id', '=', device.id)
            .executeTakeFirstOrThrow();
          return row.telemetry_at !== null && (row.telemetry as { uptime_s: number }).uptime_s === 4242;
        }, 'the telemetry stored');
      });
    });

    describe('[attack:mqtt.device-overreach] attacks by a device with an account of its own', () => {
      it("cannot publish to another device's ack", async () => {
        const [mallory, victim] = [await onlineDevice(), await onlineDevice()];
        const before = logsAbout(victim.id).length;
        await attempt(mallory, deviceTopic(PREFIX, victim.id, 'ack'), 'not even JSON');
        expect(logsAbout(victim.id).length).toBe(before);
      });

      it("cannot subscribe to another device's cmd, to every device's, to # or to $SYS/#", async () => {
        let [mallory, victim] = [await onlineDevice(), await onlineDevice()];
        const filters = [deviceTopic(PREFIX, victim.id, 'cmd'), `${PREFIX}/dev/+/cmd`, '#', '$SYS/#'];
        for (const filter of filters) {
          // A refusal that closed the connection: the next filter is tried on a new one.
          if (!mallory.client.connected) mallory = await env.connect(broker, mallory.account);
          expect({ filter, granted: await mayReceive(mallory.client, filter) }).toEqual({
            filter,
            granted: false,
          });
        }
        if (!mallory.client.connected) mallory = await env.connect(broker, mallory.account);
        const entry = await insertOpenEntry(env.db, victim.id);
        const result = dispatch(broker, dispatchRequest(victim.id, entry));
        await victim.ack(await victim.nextCommand());
        await result;
        await roundTrip(mallory);
        await pause(150);
        expect([...mallory.commands, ...mallory.unverified]).toEqual([]);
      });

      it('cannot publish on a cmd topic, retained or not, its own or another', async () => {
        const [mallory, victim] = [await onlineDevice(), await onlineDevice()];
        const fake = JSON.stringify({ v: 1, note: 'open everything' });
        await attempt(mallory, deviceTopic(PREFIX, victim.id, 'cmd'), fake, true);
        let again = await env.connect(broker, mallory.account);
        await attempt(again, deviceTopic(PREFIX, victim.id, 'cmd'), fake);
        again = await env.connect(broker, mallory.account);
        await attempt(again, deviceTopic(PREFIX, mallory.id, 'cmd'), fake, true);
        expect([...victim.commands, ...victim.unverified]).toEqual([]);
        // A retained command would reach every later subscriber.
        for (const account of [victim.account, mallory.account]) {
          const fresh = await env.connect(broker, account);
          await roundTrip(fresh);
          await pause(150);
          expect([...fresh.commands, ...fresh.unverified]).toEqual([]);
        }
      });

      it('[attack:mqtt.session-takeover] cannot connect with a client id holding +, # or /', async () => {
        const device = await env.provision(broker);
        for (const clientId of [
          `${device.id}+`,
          `${device.id}#`,
          `${device.id}/x`,
          '+',
          '#',
          `${PREFIX}/dev`,
        ]) {
          const result = await tryConnect(broker.deviceUrl, {
            clientId,
            username: device.id,
            password: device.password,
          });
          if (kind === 'cluster' && result.ok) {
            // RabbitMQ 3.10 cannot tie a client id to a user: it lets the connection in, but the session queue is
            // named after the client id and the account may create only its own, so it receives nothing
            // (docs/design.md section 7.2).
            const read = await mayReceive(result.client, deviceTopic(PREFIX, device.id, 'cmd'));
            result.client.end(true);
            expect({ clientId, read }).toEqual({ clientId, read: false });
          } else {
            expect({ clientId, ok: result.ok }).toEqual({ clientId, ok: false });
          }
        }
      });

      it("[attack:mqtt.session-takeover] cannot connect with another device's identity, nor take over its session", async () => {
        const mallory = await env.provision(broker);
        let victim = await onlineDevice();
        const attempts = [
          { clientId: victim.id, username: mallory.id, password: mallory.password },
          { clientId: victim.id, username: victim.id, password: mallory.password },
          { clientId: victim.id, username: victim.id, password: 'guessed' },
          { clientId: victim.id, username: victim.id },
        ];
        for (const options of attempts) {
          const result = await tryConnect(broker.deviceUrl, options);
          if (kind === 'cluster' && result.ok && options.username === mallory.id) {
            // RabbitMQ 3.10 lets a valid account in under any client id, which ends the victim's connection, but
            // the attacker cannot read the victim's commands; the victim's controller reconnects
            // (docs/design.md section 7.2).
            const read = await mayReceive(result.client, deviceTopic(PREFIX, victim.id, 'cmd'));
            result.client.end(true);
            expect({ ...options, read }).toEqual({ ...options, read: false });
            continue;
          }
          expect({ ...options, ok: result.ok }).toEqual({ ...options, ok: false });
        }
        if (kind === 'cluster') victim = await env.connect(broker, victim.account);
        // The victim's session was never interrupted: it still gets and answers commands.
        expect(victim.client.connected).toBe(true);
        const entry = await insertOpenEntry(env.db, victim.id);
        const result = dispatch(broker, dispatchRequest(victim.id, entry));
        await victim.ack(await victim.nextCommand());
        expect((await result).kind).toBe('acked');
      });

      it('[attack:mqtt.session-takeover] cannot connect before it has broker credentials', async () => {
        const device = await insertDevice(env.db, { provisioned: false });
        const result = await tryConnect(broker.deviceUrl, {
          clientId: device.id,
          username: device.id,
          password: device.password,
        });
        expect(result.ok).toBe(false);
      });
    });

    describe('device accounts', () => {
      it('addDevice with a new password ends the old session and only the new password works', async () => {
        const device = await onlineDevice();
        const closed = device.closed();
        await broker.addDevice(device.id, 'the-new-password-of-this-device');
        await closed;
        const old = await tryConnect(broker.deviceUrl, {
          clientId: device.id,
          username: device.id,
          password: device.account.password,
        });
        expect(old.ok).toBe(false);
        const renewed = await env.connect(broker, {
          ...device.account,
          password: 'the-new-password-of-this-device',
        });
        expect(renewed.client.connected).toBe(true);
      });

      it('removeDevice ends the session and refuses the account', async () => {
        const device = await onlineDevice();
        const closed = device.closed();
        await broker.removeDevice(device.id);
        await closed;
        const result = await tryConnect(broker.deviceUrl, {
          clientId: device.id,
          username: device.id,
          password: device.account.password,
        });
        expect(result.ok).toBe(false);
      });
    });

    // Last: it restarts the broker the other tests use (external) or replaces the cloud instance (embedded).
    it('applies once an acknowledgement sent after the device reconnected to a restarted broker', async () => {
      const account = await env.provision(broker);
      const device = await env.connect(broker, account, { reconnect: true });
      await env.waitOnline(device.id);
      const entry = await insertOpenEntry(env.db, device.id);
      const result = dispatch(broker, dispatchRequest(device.id, entry));
      const command = await device.nextCommand();
      const reconnected = device.reconnected();
      broker = await env.restartBroker(broker, { ackTimeoutMs: ACK_TIMEOUT_MS });
      await reconnected;
      const ack = await device.ack(command);
      expect(['acked', 'timeout']).toContain((await result).kind);
      await waitFor(
        async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
        'the acknowledgement in the journal',
      );
      await device.publish('ack', ack);
      await roundTrip(device);
      expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
    });
  });
}

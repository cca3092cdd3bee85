import { createPublicKey, generateKeyPairSync, sign as signBytes, verify as verifyBytes } from 'node:crypto';
import { constants, openSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import mqtt, { type IClientOptions, MqttClient } from 'mqtt';
import { VERSION } from '../../device/version.js';
import { type DeviceState, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { CONNECT, fixedHeader } from '../support/raw-mqtt.js';
import { noDelay } from './mqtt-baseline.js';
import type { DeviceLogin, FloodFigures, FromClients, SignedEnvelope, ToClients } from './mqtt-clients.js';

/**
 * The child process of mqtt-clients.ts (started with fork, never on its own).
 *   echo <url>: one client that answers every message on bench/request/<id> with the same payload on
 *     bench/reply/<id>, QoS 1 both ways: the device's half of the MQTT round-trip baseline.
 *   durable-echo <url> <dir> <key>: the same, doing what a controller must for a command with node:crypto
 *     and node:fs alone: verifies the request's Ed25519 signature under <key> (SPKI DER, base64), signs its
 *     reply, writes that durably, then sends it: the device's half of the floor.
 *   devices <url> [local address]: on a `devices` message, connects each device the way device/runtime/session.ts does (its
 *     own client id and password, an "offline" will, clean session), subscribes to its `cmd` at QoS 1 and
 *     publishes its retained `state` at QoS 1; then stays idle until `stop`.
 *   flood <url>: on a `flood` message, each attacker opens a connection, declares a CONNECT of `declaredBytes`
 *     and streams it as fast as the socket takes it until the broker closes the connection, then starts again,
 *     for `seconds`; then reports what they got written.
 */
const [mode, url, ...args] = process.argv.slice(2);
const clients: MqttClient[] = [];
/**
 * Connections opened at once by one process: enough to be quick, and under the embedded broker's 32 logins
 * pending per source address (cloud/links/controllers/connection-limits.ts), which a fleet behind one address would meet.
 */
const IN_FLIGHT = 24;

function tell(message: FromClients): void {
  process.send?.(message);
}

function fail(error: unknown): void {
  tell({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
}

async function echo(): Promise<void> {
  const client = await mqtt.connectAsync(url!, { reconnectPeriod: 0, clientId: 'bench-echo' });
  noDelay(client);
  clients.push(client);
  client.on('message', (topic, payload) => {
    client.publish(`bench/reply/${topic.slice('bench/request/'.length)}`, payload, { qos: 1 });
  });
  await client.subscribeAsync('bench/request/+', { qos: 1 });
  tell({ type: 'ready' });
}

async function durableEcho(dir: string, requesterKey: string): Promise<void> {
  const requester = createPublicKey({
    key: Buffer.from(requesterKey, 'base64'),
    format: 'der',
    type: 'spki',
  });
  const own = generateKeyPairSync('ed25519');
  // As device/append-log.ts writes: one O_DSYNC write per record.
  const { O_RDWR, O_APPEND, O_CREAT, O_DSYNC } = constants;
  const log = openSync(join(dir, 'durable-echo.log'), O_RDWR | O_APPEND | O_CREAT | O_DSYNC, 0o600);
  const client = await mqtt.connectAsync(url!, { reconnectPeriod: 0, clientId: 'bench-durable-echo' });
  noDelay(client);
  clients.push(client);
  client.on('message', (topic, payload) => {
    const request = JSON.parse(payload.toString()) as SignedEnvelope;
    if (!verifyBytes(null, Buffer.from(request.body), requester, Buffer.from(request.sig, 'base64'))) return;
    const body = JSON.stringify({ request: request.body, done_at: Date.now() });
    const sig = signBytes(null, Buffer.from(body), own.privateKey).toString('base64');
    writeSync(log, `${body}\n`);
    const reply: SignedEnvelope = { body, sig };
    client.publish(`bench/reply/${topic.slice('bench/request/'.length)}`, JSON.stringify(reply), { qos: 1 });
  });
  await client.subscribeAsync('bench/request/+', { qos: 1 });
  tell({
    type: 'ready',
    publicKey: own.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  });
}

async function connectDevice(prefix: string, device: DeviceLogin): Promise<void> {
  const topic = (channel: 'cmd' | 'state') => deviceTopic(prefix, device.id, channel);
  const offline: DeviceState = { v: PROTOCOL_VERSION, device_id: device.id, online: false, at: Date.now() };
  const client = await connectFrom(args[0], {
    clientId: device.id,
    username: device.id,
    password: device.password,
    clean: true,
    keepalive: 30,
    reconnectPeriod: 0,
    connectTimeout: 20_000,
    will: { topic: topic('state'), payload: Buffer.from(JSON.stringify(offline)), qos: 1, retain: true },
  });
  noDelay(client);
  clients.push(client);
  await client.subscribeAsync(topic('cmd'), { qos: 1 });
  const online: DeviceState = {
    v: PROTOCOL_VERSION,
    device_id: device.id,
    online: true,
    at: Date.now(),
    version: VERSION,
    objects: [
      { id: 'gate', label: 'Main gate', kind: 'relay' },
      { id: 'door', label: 'Side door', kind: 'relay' },
    ],
  };
  await client.publishAsync(topic('state'), JSON.stringify(online), { qos: 1, retain: true });
}

/**
 * A client connected from `localAddress` (one of 127.0.0.x), so that several processes' connections come from
 * several sources, as a fleet's do, rather than sharing one source address's ports; from any address otherwise.
 */
function connectFrom(localAddress: string | undefined, options: IClientOptions): Promise<MqttClient> {
  if (!localAddress) return mqtt.connectAsync(url!, options);
  const target = new URL(url!);
  const client = new MqttClient(
    () => connect({ host: target.hostname, port: Number(target.port), localAddress }),
    options,
  );
  return new Promise((resolve, reject) => {
    client.once('connect', () => resolve(client));
    client.once('error', (error) => {
      client.end(true);
      reject(error);
    });
  });
}

async function connectDevices(prefix: string, devices: DeviceLogin[]): Promise<void> {
  let next = 0;
  let connected = 0;
  const worker = async () => {
    while (next < devices.length) {
      const device = devices[next++]!;
      await connectDevice(prefix, device);
      connected++;
      if (connected % 250 === 0 && connected < devices.length) tell({ type: 'progress', connected });
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, devices.length) }, worker));
  tell({ type: 'connected', connected });
}

/** Attack bytes written at a time: a socket's usual read size, so the broker gets them as fast as it reads. */
const FLOOD_CHUNK = Buffer.alloc(64 * 1024, 0x41);

async function flood(attackers: number, seconds: number, declaredBytes: number): Promise<void> {
  const { hostname, port } = new URL(url!);
  const until = Date.now() + seconds * 1000;
  const figures: FloodFigures = { connections: 0, written: 0, mostInOne: 0 };
  const attacker = async () => {
    while (Date.now() < until) {
      const written = await oversizedConnect(hostname, Number(port), declaredBytes);
      figures.connections++;
      figures.written += written;
      figures.mostInOne = Math.max(figures.mostInOne, written);
    }
  };
  await Promise.all(Array.from({ length: attackers }, attacker));
  tell({ type: 'flooded', ...figures });
}

/** One connection of the attack: the bytes the socket took (write callbacks without error) before it closed. */
function oversizedConnect(host: string, port: number, declaredBytes: number): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let written = 0;
    let over = false;
    const finish = () => {
      if (over) return;
      over = true;
      socket.destroy();
      resolve(written);
    };
    const send = (bytes: Buffer) =>
      socket.write(bytes, (error) => {
        if (error) return finish();
        written += bytes.length;
        if (written >= declaredBytes) finish();
        else if (!over) send(FLOOD_CHUNK);
      });
    socket.once('connect', () => send(fixedHeader(CONNECT, declaredBytes)));
    socket.once('error', finish);
    socket.once('end', finish);
    socket.once('close', finish);
  });
}

async function stop(): Promise<void> {
  await Promise.allSettled(clients.map((client) => client.endAsync()));
  process.exit(0);
}

process.on('message', (raw) => {
  const message = raw as ToClients;
  if (message.type === 'stop') void stop();
  else if (message.type === 'devices') connectDevices(message.prefix, message.devices).catch(fail);
  else flood(message.attackers, message.seconds, message.declaredBytes).catch(fail);
});
// The parent gone (it crashed or was killed): nothing is left to measure.
process.on('disconnect', () => void stop());

if (mode === 'echo') echo().catch(fail);
else if (mode === 'durable-echo') durableEcho(args[0]!, args[1]!).catch(fail);
else if (mode === 'devices' || mode === 'flood') tell({ type: 'ready' });
else fail(`unknown mode ${mode}`);

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { freePort } from '../support/ports.js';
import { startRabbitCluster } from '../support/rabbitmq-cluster.js';

/*
 * The figures of docs/design.md section 7.2, for the two candidate clustered brokers on this machine:
 *   npx tsx test/cluster/measure-brokers.ts rabbitmq 3000
 *   npx tsx test/cluster/measure-brokers.ts nats 3000
 * Three nodes on free ports in a temporary folder; idle clients spread over the nodes, each subscribed at QoS 1
 * to a command topic of its own as a controller is; memory is the nodes' resident set before and after.
 */
const NATS_SERVER = '/usr/sbin/nats-server';
const CONCURRENCY = 100;

interface Cluster {
  ports: number[];
  pids(): number[];
  username?: string;
  password?: string;
  kill(index: number): void;
  stop(): Promise<void>;
  startMs: number;
}

async function rabbitmq(): Promise<Cluster> {
  const cluster = await startRabbitCluster('m/gl');
  const api = `http://127.0.0.1:${cluster.nodes[0]!.apiPort}/api`;
  const admin = readFileSync(join(cluster.dir, 'n1', 'rabbitmq.conf'), 'utf8').match(
    /^default_pass = (.*)$/m,
  )![1]!;
  const authorization = `Basic ${Buffer.from(`admin:${admin}`).toString('base64')}`;
  const put = (path: string, body: unknown) =>
    fetch(`${api}/${path}`, {
      method: 'PUT',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  // One account for every measuring client, with the rights a device has, over all command topics.
  await put('users/meter', { password: 'meter', tags: '' });
  await put('permissions/%2F/meter', { configure: '.*', write: '.*', read: '.*' });
  return {
    ports: cluster.nodes.map((node) => node.mqttPort),
    pids: () =>
      cluster.nodes.map((_, i) => Number(readFileSync(join(cluster.dir, `n${i + 1}`, 'pid'), 'utf8'))),
    username: 'meter',
    password: 'meter',
    kill: (index) => void cluster.kill(index),
    stop: () => cluster.stop(),
    startMs: cluster.startMs,
  };
}

async function nats(): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-nats-'));
  const nodes = await Promise.all(
    [0, 1, 2].map(async () => ({
      client: await freePort(),
      route: await freePort(),
      mqtt: await freePort(),
    })),
  );
  const started = Date.now();
  const children: ChildProcess[] = nodes.map((node, i) => {
    const routes = nodes.filter((other) => other !== node).map((other) => `nats://127.0.0.1:${other.route}`);
    const config = join(dir, `n${i + 1}.conf`);
    writeFileSync(
      config,
      [
        `server_name: n${i + 1}`,
        `listen: 127.0.0.1:${node.client}`,
        `jetstream { store_dir: "${join(dir, `js${i + 1}`)}" }`,
        `cluster { name: gl, listen: 127.0.0.1:${node.route}, routes: [${routes.join(', ')}] }`,
        `mqtt { listen: 127.0.0.1:${node.mqtt} }`,
      ].join('\n'),
    );
    const log = openSync(join(dir, `n${i + 1}.log`), 'a');
    return spawn(NATS_SERVER, ['-c', config], { stdio: ['ignore', log, log] });
  });
  // Ready once an MQTT session can be made on every node: that needs JetStream and its meta leader.
  for (const node of nodes) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const client = await connect(node.mqtt, `probe-${node.mqtt}`).catch(() => null);
      if (client) {
        await client.endAsync();
        break;
      }
      if (Date.now() > deadline) throw new Error(`nats did not start; see ${dir}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return {
    ports: nodes.map((node) => node.mqtt),
    pids: () => children.filter((child) => child.exitCode === null).map((child) => child.pid!),
    kill: (index) => children[index]!.kill('SIGKILL'),
    async stop() {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
    startMs: Date.now() - started,
  };
}

/** A clean session as a controller has; rejects when the broker closes or does not answer in 10 s. */
async function connect(
  port: number,
  clientId: string,
  auth: Partial<Pick<Cluster, 'username' | 'password'>> = {},
): Promise<MqttClient> {
  const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, {
    protocolVersion: 4,
    clientId,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    ...(auth.username ? { username: auth.username, password: auth.password } : {}),
  });
  try {
    await new Promise<void>((done, fail) => {
      client.once('connect', () => done());
      client.once('error', fail);
      client.once('close', () => fail(new Error('closed')));
      setTimeout(() => fail(new Error('no answer')), 10_000);
    });
    return client;
  } catch (error) {
    client.end(true);
    throw error;
  }
}

/** Resident memory of the processes, in bytes (summed over the tree of each node). */
function rss(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m)![1]) * 1024;
    } catch {
      // Gone.
    }
  }
  return total;
}

async function main(): Promise<void> {
  const kind = process.argv[2] ?? 'rabbitmq';
  const count = Number(process.argv[3] ?? 3000);
  const cluster = kind === 'nats' ? await nats() : await rabbitmq();
  const clients: MqttClient[] = [];
  try {
    console.log(`${kind}: 3-node cluster ready in ${cluster.startMs} ms`);
    await new Promise((done) => setTimeout(done, 2000));
    const before = rss(cluster.pids());
    const connectStart = Date.now();
    let refused = 0;
    for (let next = 0; next < count; next += CONCURRENCY) {
      const batch = Array.from({ length: Math.min(CONCURRENCY, count - next) }, async (_, j) => {
        const i = next + j;
        const client = await connect(cluster.ports[i % 3]!, `D${String(i).padStart(10, '0')}`, cluster);
        clients.push(client);
        const [grant] = await client
          .subscribeAsync(`m/gl/dev/D${String(i).padStart(10, '0')}/cmd`, { qos: 1 })
          .catch(() => [{ qos: 128 }]);
        if (grant?.qos === 128) refused++;
      });
      await Promise.all(batch);
    }
    const connectMs = Date.now() - connectStart;
    console.log(
      `${count} clients connected and subscribed in ${connectMs} ms: ${Math.round((count * 1000) / connectMs)}/s` +
        ` (${refused} QoS 1 subscriptions refused)`,
    );
    await new Promise((done) => setTimeout(done, 5000));
    const after = rss(cluster.pids());
    console.log(
      `memory: ${(before / 2 ** 20).toFixed(0)} MiB idle, ${(after / 2 ** 20).toFixed(0)} MiB with ${count} clients, ` +
        `${((after - before) / count / 1024).toFixed(1)} KiB per connection`,
    );
    // A command published on node 1 reaches a client on node 0.
    const target = clients[0]!;
    const publisher = await connect(cluster.ports[1]!, 'publisher', cluster);
    const topic = `m/gl/dev/${target.options.clientId}/cmd`;
    const heard = new Promise<number>((done) => target.once('message', () => done(Date.now())));
    const sent = Date.now();
    await publisher.publishAsync(topic, 'open', { qos: 1 });
    console.log(`cross-node delivery: ${(await heard) - sent} ms`);
    // Node 0 dies; a client of it reconnects to node 2 and subscribes again; how long until a command reaches it.
    const killedAt = Date.now();
    cluster.kill(0);
    const back = await (async () => {
      for (;;) {
        try {
          const client = await connect(cluster.ports[2]!, target.options.clientId!, cluster);
          await client.subscribeAsync(topic, { qos: 1 });
          const got = new Promise<void>((done) => client.once('message', () => done()));
          await publisher.publishAsync(topic, 'open', { qos: 1 });
          await Promise.race([
            got,
            new Promise((_, fail) => setTimeout(() => fail(new Error('no command')), 1000)),
          ]);
          return client;
        } catch {
          await new Promise((done) => setTimeout(done, 100));
        }
      }
    })();
    console.log(
      `after a node kill: a client of it receives commands through another node after ${Date.now() - killedAt} ms`,
    );
    await back.endAsync(true);
    await publisher.endAsync(true);
  } finally {
    await Promise.all(clients.map((client) => client.endAsync(true)));
    await cluster.stop();
  }
}

await main();

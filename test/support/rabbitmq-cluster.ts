import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { accepts, freePort } from './ports.js';

/**
 * A private three-node RabbitMQ cluster for a test file (or `npx tsx test/support/rabbitmq-cluster.ts`), set up
 * the way deploy/rabbitmq/README.md tells operators: the shipped rabbitmq.conf on each node (with this
 * run's ports, node names and folder), an administrator, then the shipped setup-cloud.sh. Every node listens on
 * 127.0.0.1 only, on free ports; the nodes share an Erlang cookie in the folder, which is their HOME.
 */
export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
export const rabbitmqAvailable = existsSync(RABBITMQ_SERVER);

const SHIPPED = resolve(import.meta.dirname, '../../deploy/rabbitmq');
const NODES = 3;
const run = promisify(execFile);

export interface ClusterNode {
  readonly name: string;
  readonly mqttPort: number;
  /** The TLS listener's port, with `tls`. */
  readonly tlsPort: number | undefined;
  readonly apiPort: number;
  readonly distPort: number;
}

export interface TestRabbitCluster {
  readonly dir: string;
  readonly nodes: readonly ClusterNode[];
  /** MQTT_URL for the cloud, every node listed, `first` first: `mqtt://cloud:<password>@...,mqtt://...`. */
  cloudUrl(first?: number): string;
  /** RABBITMQ_API_URL for the cloud: every node's management API, `first` first. */
  apiUrl(first?: number): string;
  /** The URL of one node as devices use it (no credentials). */
  nodeUrl(index: number): string;
  /** Every node's URL, `first` first, as MQTT_PUBLIC_URL lists them: the TLS listeners' with `tls`. */
  deviceUrl(first?: number): string;
  /** SIGKILLs one node, as a crash would; the others go on. */
  kill(index: number): Promise<void>;
  stop(): Promise<void>;
  /** How long the three nodes took to be clustered and accepting MQTT connections. */
  readonly startMs: number;
}

/** The shipped TLS listener's files: a certificate for 127.0.0.1, its key, and the CA that signed it. */
export interface RabbitTls {
  certFile: string;
  keyFile: string;
  caFile: string;
}

/**
 * `nodes`: how many (3 by default; 1 is a single node, which starts in a third of the time). `tls`: each node
 * also has the shipped TLS listener with these files, and devices are given it.
 */
export async function startRabbitCluster(
  prefix: string,
  options: { nodes?: number; tls?: RabbitTls } = {},
): Promise<TestRabbitCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-rabbitmq-'));
  const tag = `gl${randomBytes(4).toString('hex')}`;
  const nodes: ClusterNode[] = [];
  const { tls } = options;
  for (let i = 1; i <= (options.nodes ?? NODES); i++) {
    nodes.push({
      name: `${tag}n${i}@localhost`,
      mqttPort: await freePort(),
      tlsPort: tls ? await freePort() : undefined,
      apiPort: await freePort(),
      distPort: await freePort(),
    });
  }
  const adminPassword = randomBytes(12).toString('hex');
  const cloudPassword = randomBytes(12).toString('hex');
  // The cookie the nodes and the CLI share: $HOME/.erlang.cookie, readable by its owner only.
  writeFileSync(join(dir, '.erlang.cookie'), randomBytes(20).toString('hex'));
  chmodSync(join(dir, '.erlang.cookie'), 0o400);

  const started = Date.now();
  // One node after the other: the first knows no peer and boots at once, each next one joins it. Nodes joining
  // together race in the MQTT plugin's client id registry (3.10 leaves a node waiting for it for good).
  const children = [launch(dir, nodes[0]!, nodes, adminPassword, tls)];
  const cluster: TestRabbitCluster = {
    dir,
    nodes,
    startMs: 0,
    cloudUrl: (first = 0) =>
      ordered(nodes, first)
        .map((node, i) => `mqtt://${i === 0 ? `cloud:${cloudPassword}@` : ''}127.0.0.1:${node.mqttPort}`)
        .join(','),
    apiUrl: (first = 0) =>
      ordered(nodes, first)
        .map((node) => `http://127.0.0.1:${node.apiPort}`)
        .join(','),
    nodeUrl: (index) => `mqtt://127.0.0.1:${nodes[index]!.mqttPort}`,
    deviceUrl: (first = 0) =>
      ordered(nodes, first)
        .map((node) =>
          node.tlsPort ? `mqtts://127.0.0.1:${node.tlsPort}` : `mqtt://127.0.0.1:${node.mqttPort}`,
        )
        .join(','),
    async kill(index) {
      const child = children[index]!;
      // A node killed before has its signal, not an exit code.
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      const exited = new Promise((done) => child.once('exit', done));
      // The server script runs the Erlang VM as its child, in the process group launch() gave the script: kill
      // the group, so that a node killed before it wrote its pid file (a start that timed out) goes too, rather
      // than running on and slowing every test after it.
      process.kill(-child.pid, 'SIGKILL');
      await exited;
    },
    async stop() {
      await Promise.all(nodes.map((_, i) => cluster.kill(i).catch(() => undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const [i, node] of nodes.entries()) {
      if (i > 0) children.push(launch(dir, node, nodes, adminPassword, tls));
      await ready(node, children[i]!, dir, i);
    }
    await clustered(nodes[0]!, nodes.length, adminPassword, dir);
    Object.assign(cluster, { startMs: Date.now() - started });
    await run('sh', [join(SHIPPED, 'setup-cloud.sh')], {
      env: {
        ...process.env,
        RABBITMQ_API: `http://127.0.0.1:${nodes[0]!.apiPort}`,
        RABBITMQ_ADMIN_USER: 'admin',
        RABBITMQ_ADMIN_PASSWORD: adminPassword,
        CLOUD_PASSWORD: cloudPassword,
        MQTT_TOPIC_PREFIX: prefix,
      },
    });
  } catch (error) {
    // The folder stays, with each node's logs, for the error message to point at.
    await Promise.all(nodes.map((_, i) => cluster.kill(i).catch(() => undefined)));
    throw error;
  }
  return cluster;
}

function ordered<T>(items: readonly T[], first: number): T[] {
  return [...items.slice(first), ...items.slice(0, first)];
}

/**
 * The shipped file with this node's listeners (loopback, free ports), the cluster's node names and a first
 * administrator; everything else as shipped. Without `tls` the TLS listener is left out: RabbitMQ refuses to
 * start on certificate files that are not there.
 */
function renderConfig(
  template: string,
  node: ClusterNode,
  nodes: readonly ClusterNode[],
  admin: string,
  tls: RabbitTls | undefined,
): string {
  const withTls =
    tls && node.tlsPort
      ? template
          .replace(
            /^mqtt\.listeners\.ssl\.default = .*$/m,
            `mqtt.listeners.ssl.default = 127.0.0.1:${node.tlsPort}`,
          )
          .replace(/^ssl_options\.certfile = .*$/m, `ssl_options.certfile = ${tls.certFile}`)
          .replace(/^ssl_options\.keyfile = .*$/m, `ssl_options.keyfile = ${tls.keyFile}`)
          .replace(/^ssl_options\.cacertfile = .*$/m, `ssl_options.cacertfile = ${tls.caFile}`)
      : template.replace(/^(mqtt\.listeners\.ssl\..*|ssl_options\..*)\n/gm, '');
  let config = withTls
    .replace(
      /^mqtt\.listeners\.tcp\.default = .*$/m,
      `mqtt.listeners.tcp.default = 127.0.0.1:${node.mqttPort}`,
    )
    .replace(
      /^management\.tcp\.port = .*$/m,
      `management.tcp.port = ${node.apiPort}\nmanagement.tcp.ip = 127.0.0.1`,
    );
  // The first node knows no peer and boots at once; the others join it.
  const peers = node === nodes[0] ? [node] : [nodes[0]!, node];
  config = config.replace(/^cluster_formation\.classic_config\.nodes\..*\n/gm, '');
  for (const [i, peer] of peers.entries()) {
    config += `cluster_formation.classic_config.nodes.${i + 1} = ${peer.name}\n`;
  }
  config +=
    'cluster_formation.discovery_retry_limit = 120\ncluster_formation.discovery_retry_interval = 500\n';
  return `${config}default_user = admin\ndefault_pass = ${admin}\ndefault_user_tags.administrator = true\n`;
}

function launch(
  dir: string,
  node: ClusterNode,
  nodes: readonly ClusterNode[],
  admin: string,
  tls: RabbitTls | undefined,
): ChildProcess {
  const index = nodes.indexOf(node) + 1;
  const home = join(dir, `n${index}`);
  mkdirSync(home, { recursive: true });
  const config = join(home, 'rabbitmq.conf');
  writeFileSync(
    config,
    renderConfig(readFileSync(join(SHIPPED, 'rabbitmq.conf'), 'utf8'), node, nodes, admin, tls),
  );
  writeFileSync(join(home, 'enabled_plugins'), '[rabbitmq_mqtt,rabbitmq_management].\n');
  const log = openSync(join(home, 'server.log'), 'a');
  return spawn(RABBITMQ_SERVER, [], {
    // A group of its own, which kill() ends whole: the script and the Erlang VM it starts.
    detached: true,
    stdio: ['ignore', log, log],
    env: {
      ...process.env,
      HOME: dir,
      RABBITMQ_NODENAME: node.name,
      RABBITMQ_DIST_PORT: String(node.distPort),
      RABBITMQ_CONFIG_FILE: config,
      RABBITMQ_ENABLED_PLUGINS_FILE: join(home, 'enabled_plugins'),
      RABBITMQ_MNESIA_BASE: join(home, 'mnesia'),
      RABBITMQ_LOG_BASE: join(home, 'log'),
      RABBITMQ_PID_FILE: join(home, 'pid'),
    },
  });
}

/** Until the node accepts MQTT connections (its plugins are up) or its process ended. */
async function ready(node: ClusterNode, child: ChildProcess, dir: string, index: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if ((await accepts(node.mqttPort)) && existsSync(join(dir, `n${index + 1}`, 'pid'))) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`RabbitMQ node ${node.name} did not start; see ${join(dir, `n${index + 1}`)}`);
}

/** Until the first node sees all `count` running. */
async function clustered(node: ClusterNode, count: number, admin: string, dir: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  const authorization = `Basic ${Buffer.from(`admin:${admin}`).toString('base64')}`;
  while (Date.now() < deadline) {
    try {
      const answer = await fetch(`http://127.0.0.1:${node.apiPort}/api/nodes`, {
        headers: { authorization },
      });
      if (answer.ok) {
        const list = (await answer.json()) as { running?: boolean }[];
        if (list.filter((n) => n.running).length === count) return;
      }
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`the RabbitMQ nodes did not form a cluster; see ${dir}`);
}

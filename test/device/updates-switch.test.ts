import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { type DeviceState, PROTOCOL_VERSION, stateSchema } from '../../shared/protocol/messages.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { signUpdateCommand, type UpdateCommand } from '../../shared/protocol/updates.js';
import type { SignedManifest } from '../../shared/releases/manifest.js';
import {
  BundleServer,
  makeBundle,
  makeHome,
  makeReleaseTree,
  type ReleaseTree,
} from '../support/release-home.js';
import { type Supervisor, startSupervisor } from '../support/supervisor.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { DEVICE_ID, tempDir } from './fixtures.js';

/**
 * Updates over the air with the compiled daemon (docs/design.md section 12.4.3): a home as install.sh leaves
 * it, the boot guard of `known-good` started by a supervisor that restarts it like systemd, a real broker, and
 * bundles served only to calls the device signed.
 */
const PREFIX = 'test';
const cloudKey = SigningKey.generate();
const deviceKey = SigningKey.generate();
const releaseKey = SigningKey.generate();

let parent: { dir: string; cleanup: () => Promise<void> };
let trees: { v1: ReleaseTree; v2: ReleaseTree; v3: ReleaseTree };
let broker: AedesBroker;
let server: BundleServer;

beforeAll(async () => {
  parent = await tempDir();
  trees = {
    v1: makeReleaseTree(parent.dir, '0.1.0'),
    v2: makeReleaseTree(parent.dir, '0.2.0'),
    v3: makeReleaseTree(parent.dir, '0.3.0', { crashAtStart: true }),
  };
  broker = new AedesBroker();
  await broker.start();
  server = new BundleServer(DEVICE_ID, deviceKey.publicKey.base64);
  await server.start();
});

afterAll(async () => {
  await server?.stop();
  await broker?.stop();
  await parent?.cleanup();
});

interface Board {
  home: string;
  supervisor: Supervisor;
  client: MqttClient;
  state(): DeviceState | null;
  cleanup(): Promise<void>;
}

let board: Board | null = null;
let releaseId = 0;

async function startBoard(first: ReleaseTree = trees.v1): Promise<Board> {
  const dir = await tempDir();
  const home = makeHome(dir.dir, first);
  const keyFile = join(dir.dir, 'device-key.pem');
  writeFileSync(keyFile, deviceKey.toPem(), { mode: 0o600 });
  const configFile = join(dir.dir, 'device.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      cloud_url: server.origin,
      device_id: DEVICE_ID,
      mqtt: { url: broker.url, username: DEVICE_ID, password: 'secret', reconnect_max_ms: 200 },
      topic_prefix: PREFIX,
      command_key: cloudKey.publicKey.base64,
      release_key: releaseKey.publicKey.base64,
      private_key_file: keyFile,
      state_dir: join(dir.dir, 'state'),
      objects: [{ id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 }],
      clock: { check: 'none', interval_s: 30 },
    }),
  );
  const client = await mqtt.connectAsync(broker.url, { clientId: `observer-${randomUUID()}` });
  let state: DeviceState | null = null;
  client.on('message', (_topic, payload) => {
    const parsed = stateSchema.safeParse(JSON.parse(payload.toString()));
    if (parsed.success) state = parsed.data;
  });
  await client.subscribeAsync(deviceTopic(PREFIX, DEVICE_ID, 'state'), { qos: 1 });
  const supervisor = startSupervisor(
    process.execPath,
    [join(home, 'known-good', 'bin', 'gatelink-boot.mjs'), '--home', home, 'run', '--config', configFile],
    { env: { ...process.env, NOTIFY_SOCKET: '', WATCHDOG_USEC: '' } },
  );
  return {
    home,
    supervisor,
    client,
    state: () => state,
    cleanup: async () => {
      await supervisor.stop();
      await client.endAsync();
      await dir.cleanup();
    },
  };
}

beforeEach(async () => {
  board = null;
});

afterEach(async () => {
  await board?.cleanup();
});

function updateCommand(
  release: SignedManifest,
  url: string,
  patch: Partial<Omit<UpdateCommand, 'sig'>> = {},
  key = cloudKey,
): UpdateCommand {
  const now = Date.now();
  return signUpdateCommand(key, {
    v: PROTOCOL_VERSION,
    id: randomUUID(),
    device_id: DEVICE_ID,
    action: 'update',
    rollout_id: 7,
    release,
    url,
    allow_downgrade: false,
    issued_at: now,
    expires_at: now + 60_000,
    ...patch,
  });
}

async function send(b: Board, command: UpdateCommand): Promise<void> {
  await b.client.publishAsync(deviceTopic(PREFIX, DEVICE_ID, 'cmd'), JSON.stringify(command), { qos: 1 });
}

async function online(b: Board, version: string): Promise<void> {
  await waitFor(() => b.state()?.online === true && b.state()?.version === version, `online as ${version}`);
}

function link(home: string, name: 'current' | 'known-good'): string {
  return readlinkSync(join(home, name));
}

async function offer(tree: ReleaseTree, patch = {}, key = releaseKey) {
  const { bytes, release } = await makeBundle(tree, key, patch);
  releaseId += 1;
  return { bytes, release, url: server.serve(releaseId, bytes) };
}

describe('updates over the air on the controller', () => {
  it('moves from v1 to v2, keeps v2 once healthy and reports it', async () => {
    board = await startBoard();
    await online(board, '0.1.0');
    expect(board.state()?.arch).toBe(process.arch);
    const { release, url } = await offer(trees.v2);
    await send(board, updateCommand(release, url));
    await waitFor(() => board?.state()?.update?.state === 'healthy', 'the healthy report');
    expect(board.state()).toMatchObject({ version: '0.2.0', update: { rollout_id: 7, version: '0.2.0' } });
    expect(link(board.home, 'current')).toBe(link(board.home, 'known-good'));
    expect(link(board.home, 'current')).toMatch(/^releases\/0\.2\.0-[0-9a-f]{12}$/);
    const record = JSON.parse(readFileSync(join(board.home, 'update.json'), 'utf8'));
    expect(record).toMatchObject({ phase: 'healthy', version: '0.2.0', from: '0.1.0-initial' });
  });

  it('rolls a release that crashes at every start back to the known-good one by itself, and says so', async () => {
    board = await startBoard(trees.v2);
    await online(board, '0.2.0');
    const { release, url } = await offer(trees.v3);
    await send(board, updateCommand(release, url));
    await waitFor(
      () => board?.state()?.update?.state === 'rolled_back' && board.state()?.online === true,
      'the roll-back report',
    );
    expect(board.state()).toMatchObject({
      version: '0.2.0',
      update: { version: '0.3.0', state: 'rolled_back', reason: 'crashed' },
    });
    expect(link(board.home, 'current')).toBe('releases/0.2.0-initial');
    expect(link(board.home, 'known-good')).toBe('releases/0.2.0-initial');
  });

  it('refuses a tampered bundle (hash_mismatch) and keeps running the release it had', async () => {
    board = await startBoard();
    await online(board, '0.1.0');
    const { bytes, release } = await offer(trees.v2);
    const tampered = Buffer.from(bytes);
    tampered[tampered.length - 10] = (tampered[tampered.length - 10] ?? 0) ^ 0xff;
    releaseId += 1;
    await send(board, updateCommand(release, server.serve(releaseId, tampered)));
    await waitFor(() => board?.state()?.update?.state === 'failed', 'the failure report');
    expect(board.state()?.update?.reason).toBe('hash_mismatch');
    expect(link(board.home, 'current')).toBe('releases/0.1.0-initial');
  });

  it.each([
    ['a manifest signed by another key', 'bad_release_signature'],
    ['an older version', 'older_version'],
    ['the same version', 'same_version'],
    ['another architecture', 'wrong_arch'],
    ['a command signed by another key', 'bad_signature'],
    ['a bundle on another origin', 'foreign_url'],
  ] as const)('refuses %s (%s)', async (what, reason) => {
    board = await startBoard(trees.v2);
    await online(board, '0.2.0');
    const arch = process.arch === 'arm64' ? 'x64' : 'arm64';
    const tree = what === 'an older version' ? trees.v1 : what === 'the same version' ? trees.v2 : trees.v3;
    const { release, url } = await offer(
      tree,
      what === 'another architecture' ? { arch } : {},
      what === 'a manifest signed by another key' ? SigningKey.generate() : releaseKey,
    );
    const target = what === 'a bundle on another origin' ? url.replace('127.0.0.1', 'localhost') : url;
    const key = what === 'a command signed by another key' ? SigningKey.generate() : cloudKey;
    await send(board, updateCommand(release, target, {}, key));
    await waitFor(() => board?.state()?.update?.state === 'refused', 'the refusal report');
    expect(board.state()?.update?.reason).toBe(reason);
    expect(link(board.home, 'current')).toBe('releases/0.2.0-initial');
  });

  it('takes an older release when the operator marked the rollout a downgrade', async () => {
    board = await startBoard(trees.v2);
    await online(board, '0.2.0');
    const { release, url } = await offer(trees.v1);
    await send(board, updateCommand(release, url, { allow_downgrade: true }));
    await waitFor(() => board?.state()?.update?.state === 'healthy', 'the healthy report');
    expect(board.state()?.version).toBe('0.1.0');
    expect(existsSync(join(board.home, 'releases', '0.2.0-initial'))).toBe(true);
  });
});

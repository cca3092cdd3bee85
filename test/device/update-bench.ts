import { randomUUID } from 'node:crypto';
import { readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
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
 * What the update suites share (docs/design.md section 12.4.3): the keys, three release trees (0.1.0, 0.2.0,
 * and 0.3.0 whose daemon throws as it loads), a broker, a bundle server, and boards: a home as install.sh leaves
 * it, run by the boot guard of `known-good` under a supervisor that restarts it like systemd, watched by a
 * client that keeps the device's retained state.
 */
export const PREFIX = 'test';

export interface Board {
  home: string;
  supervisor: Supervisor;
  client: MqttClient;
  state(): DeviceState | null;
  cleanup(): Promise<void>;
}

export class UpdateBench {
  readonly cloudKey = SigningKey.generate();
  readonly deviceKey = SigningKey.generate();
  readonly releaseKey = SigningKey.generate();
  readonly broker = new AedesBroker();
  readonly server = new BundleServer(DEVICE_ID, this.deviceKey.publicKey.base64);
  trees!: { v1: ReleaseTree; v2: ReleaseTree; v3: ReleaseTree };
  #cleanup: () => Promise<void> = async () => undefined;
  #releaseId = 0;

  async start(): Promise<void> {
    const parent = await tempDir();
    this.#cleanup = parent.cleanup;
    this.trees = {
      v1: makeReleaseTree(parent.dir, '0.1.0'),
      v2: makeReleaseTree(parent.dir, '0.2.0'),
      v3: makeReleaseTree(parent.dir, '0.3.0', { crashAtStart: true }),
    };
    await this.broker.start();
    await this.server.start();
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.broker.stop();
    await this.#cleanup();
  }

  /**
   * A home with `first` installed; `prepare` may change it (a state a power cut left) before the daemon starts.
   */
  async startBoard(first: ReleaseTree, prepare?: (home: string) => void): Promise<Board> {
    const dir = await tempDir();
    const home = makeHome(dir.dir, first);
    prepare?.(home);
    const configFile = this.#writeConfig(dir.dir);
    const client = await mqtt.connectAsync(this.broker.url, { clientId: `observer-${randomUUID()}` });
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

  #writeConfig(dir: string): string {
    const keyFile = join(dir, 'device-key.pem');
    writeFileSync(keyFile, this.deviceKey.toPem(), { mode: 0o600 });
    const configFile = join(dir, 'device.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        cloud_url: this.server.origin,
        device_id: DEVICE_ID,
        mqtt: { url: this.broker.url, username: DEVICE_ID, password: 'secret', reconnect_max_ms: 200 },
        topic_prefix: PREFIX,
        command_key: this.cloudKey.publicKey.base64,
        release_key: this.releaseKey.publicKey.base64,
        private_key_file: keyFile,
        state_dir: join(dir, 'state'),
        objects: [{ id: 'gate', label: 'Main gate', kind: 'simulated', pulse_ms: 0 }],
        clock: { check: 'none', interval_s: 30 },
      }),
    );
    return configFile;
  }

  /** Serves the tree's bundle as a new release; `patch` changes its manifest before it is signed by `key`. */
  async offer(tree: ReleaseTree, patch = {}, key = this.releaseKey) {
    const { bytes, release } = await makeBundle(tree, key, patch);
    this.#releaseId += 1;
    return { bytes, release, url: this.server.serve(this.#releaseId, bytes) };
  }

  /** Serves `bytes` as a new release; returns its address. */
  serve(bytes: Buffer): string {
    this.#releaseId += 1;
    return this.server.serve(this.#releaseId, bytes);
  }

  updateCommand(
    release: SignedManifest,
    url: string,
    patch: Partial<Omit<UpdateCommand, 'sig'>> = {},
    key = this.cloudKey,
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
}

export async function send(board: Board, command: UpdateCommand): Promise<void> {
  await board.client.publishAsync(deviceTopic(PREFIX, DEVICE_ID, 'cmd'), JSON.stringify(command), { qos: 1 });
}

export async function online(board: Board, version: string): Promise<void> {
  await waitFor(
    () => board.state()?.online === true && board.state()?.version === version,
    `the board online as ${version}`,
  );
}

export function link(home: string, name: 'current' | 'known-good'): string {
  return readlinkSync(join(home, name));
}

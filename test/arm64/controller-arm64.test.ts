import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../device/version.js';
import { FakeModem } from '../device/fake-modem.js';
import { hasSocat, PtyPair } from '../device/pty-pair.js';
import { boardOnline, openProvisionedBoard, provisionedBoard } from '../support/board-opening.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The controller on the Raspberry Pi's architecture (docs/design.md section 12.2): the compiled daemon run by the
 * arm64 Node.js of the npm registry under qemu-user, against a cloud running here. It catches what only arm64
 * shows (a native module without an arm64 build, a byte-order assumption) before a customer's gate does.
 * `.ci/run` installs qemu-user-static and the arm64 C libraries, and test/arm64/fetch-node.sh the Node.js.
 */
const ROOT = resolve('.');
const BIN = resolve(ROOT, 'bin/gatelink-device.mjs');
const ARM_NODE = process.env.GATELINK_ARM64_NODE ?? resolve(ROOT, '.cache/arm64/bin/node');
const QEMU = spawnSync('sh', ['-c', 'command -v qemu-aarch64-static'], { encoding: 'utf8' }).stdout.trim();
const missing = !QEMU
  ? 'qemu-aarch64-static (apt-get install qemu-user-static libc6:arm64 libstdc++6:arm64)'
  : !existsSync(ARM_NODE)
    ? `the arm64 Node.js at ${ARM_NODE} (bash test/arm64/fetch-node.sh)`
    : null;
if (missing) console.log(`arm64 suite skipped: it needs ${missing}`);

/** Emulation runs several times slower than this machine: bounds on waiting only, never on how long it took. */
const EMULATED = 120_000;
const run = promisify(execFile);

/** `gatelink-device <args>` on arm64. */
function device(args: string[]) {
  return run(QEMU, [ARM_NODE, BIN, ...args], { cwd: ROOT, timeout: EMULATED });
}

const OBJECTS_YAML = `objects:
  - {id: gate, label: Main gate, kind: simulated, pulse_ms: 0}
clock:
  check: none
`;

let database: TestDatabase;
let cloud: TestCloud;
let dir: string;
let daemon: ChildProcess | null = null;

describe.skipIf(missing !== null)('the controller on arm64 (qemu-user)', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database, ackTimeoutMs: 60_000 });
    dir = await mkdtemp(join(tmpdir(), 'gatelink-arm64-'));
  });

  afterAll(async () => {
    daemon?.kill('SIGKILL');
    await cloud?.stop();
    await database?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'is arm64 Node.js 20 running the compiled controller',
    async () => {
      const arch = await run(QEMU, [ARM_NODE, '-p', 'process.arch + " " + process.versions.node'], {
        timeout: EMULATED,
      });
      expect(arch.stdout.trim()).toMatch(/^arm64 20\./);
      expect((await device(['--version'])).stdout.trim()).toBe(VERSION);
    },
    EMULATED,
  );

  it(
    'provisions, tests, runs and opens with signed commands and acknowledgements, and stops on SIGTERM',
    async () => {
      const created = await cloud.ops('POST', '/ops/devices', { label: 'Pi gate' });
      const { provisioning_code: code } = created.body.device as { provisioning_code: string };
      await writeFile(join(dir, 'objects.yaml'), OBJECTS_YAML);
      const config = join(dir, 'device.yaml');
      const provisioned = await device([
        'provision',
        '--cloud',
        cloud.baseUrl,
        '--code',
        code,
        '--config',
        config,
        '--objects-from',
        join(dir, 'objects.yaml'),
      ]);
      const board = provisionedBoard(provisioned.stdout);
      expect(board.pairingCode, provisioned.stdout).toBeDefined();
      expect((await device(['test', '--config', config])).stdout).toContain('All objects opened.');

      let output = '';
      daemon = spawn(QEMU, [ARM_NODE, BIN, 'run', '--config', config], { cwd: ROOT });
      daemon.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      await waitFor(() => boardOnline(cloud), 'the arm64 controller to come online', EMULATED);

      const opened = await openProvisionedBoard(cloud, board, {
        owner: 'Pi owner',
        actor: 'Driver on arm64',
      });
      expect(opened.status, JSON.stringify(opened.body)).toBe(200);
      expect(opened.body).toMatchObject({ ok: 1 });
      await waitFor(
        () => /command \S+ \(gate\): opened/.test(output),
        'the daemon to log the opening',
        EMULATED,
      );

      const exited = new Promise<number | null>((done) => daemon?.once('exit', done));
      daemon.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('stopped, outputs released');
      daemon = null;
    },
    EMULATED * 3,
  );

  it.skipIf(!hasSocat)(
    'calls a GSM barrier through serialport’s arm64 build and a simulated modem',
    async () => {
      const pty = new PtyPair(dir);
      await pty.start();
      const modem = await FakeModem.open(pty.modem);
      try {
        const config = join(dir, 'device.yaml');
        const gsm = join(dir, 'gsm.json');
        const { stdout } = await run('sh', ['-c', `cat ${config}`]);
        expect(stdout).toContain('device_id');
        // The provisioned config with a GSM object instead, read by the same schema.
        const { parse } = await import('yaml');
        const base = parse(stdout) as Record<string, unknown>;
        await writeFile(
          gsm,
          JSON.stringify({
            ...base,
            objects: [
              {
                id: 'barrier',
                label: 'Barrier',
                kind: 'gsm',
                number: '+491701234567',
                ring_timeout_ms: 20_000,
              },
            ],
            modem: { path: pty.host, baud_rate: 115200, command_timeout_ms: 20_000 },
            state_dir: join(dir, 'gsm-state'),
          }),
          { mode: 0o600 },
        );
        const tested = await device(['test', '--config', gsm]);
        expect(tested.stdout).toContain('barrier (Barrier): opened');
        expect(modem.rang).toEqual(['+491701234567']);
      } finally {
        await modem.close();
        await pty.stop();
      }
    },
    EMULATED,
  );
});

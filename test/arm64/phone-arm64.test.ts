import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { create } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { customerBarriers } from '../../cloud/rules/devices/customer-barriers.js';
import { startPhoneSetup } from '../../cloud/rules/devices/phone-setups.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { FakeTermux } from '../device/fake-termux.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { injectRelease, signedRelease } from '../support/releases.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A customer's phone as the controller of a gate that opens on a call (docs/design.md sections 9.3 and 12.6),
 * from the command the barriers page gives to a company's opening placed as a call: the served installer run by
 * sh for real, with curl against this cloud, the release checked and unpacked; `node` on its PATH is the arm64
 * Node.js 20 under qemu-user, as a phone's CPU. Termux's own Node.js is a bionic build that cannot run here, so
 * what stands in is the glibc arm64 build of the same major line; stand-ins also for `pkg`, `uname` and
 * Termux:API's commands (test/device/fake-termux.ts). The release's tree holds a launcher for this checkout's
 * compiled controller, which is what a release's tree holds compiled.
 */
const ROOT = resolve('.');
const ARM_NODE = process.env.GATELINK_ARM64_NODE ?? resolve(ROOT, '.cache/arm64/bin/node');
const QEMU = spawnSync('sh', ['-c', 'command -v qemu-aarch64-static'], { encoding: 'utf8' }).stdout.trim();
const missing = !QEMU
  ? 'qemu-aarch64-static (apt-get install qemu-user-static libc6:arm64 libstdc++6:arm64)'
  : !existsSync(ARM_NODE)
    ? `the arm64 Node.js at ${ARM_NODE} (bash test/arm64/fetch-node.sh)`
    : !existsSync(resolve(ROOT, 'dist/device/main.js'))
      ? 'the compiled controller (npm run build)'
      : null;
if (missing) console.log(`phone arm64 suite skipped: it needs ${missing}`);

/** Emulation runs several times slower than this machine: bounds on waiting only, never on how long it took. */
const EMULATED = 120_000;
const GATE_NUMBER = '+491701234567';
const run = promisify(execFile);
const releaseKey = SigningKey.generate();

let database: TestDatabase;
let cloud: TestCloud;
let phone: FakeTermux;
let work: string;

/** A release whose tree runs this checkout's compiled controller. */
async function release(): Promise<Buffer> {
  const tree = join(work, 'tree');
  const launcher = `await import(${JSON.stringify(pathToFileURL(resolve(ROOT, 'bin/gatelink-device.mjs')).href)});\n`;
  const files: Record<string, string> = {
    'release.json': JSON.stringify({
      name: 'gatelink-device',
      version: '1.0.0',
      arch: 'arm64',
      node_abi: '115',
    }),
    'bin/gatelink-device.mjs': launcher,
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(tree, path, '..'), { recursive: true });
    writeFileSync(join(tree, path), content);
  }
  const out = join(work, 'release.tar.gz');
  await create({ gzip: true, file: out, cwd: tree, portable: true }, Object.keys(files));
  return readFileSync(out);
}

/** The phone's shell: Termux's environment, its `node` the arm64 build under qemu, `pkg` and `uname` stand-ins. */
function phoneEnv(): Record<string, string> {
  const bin = join(work, 'phone-bin');
  mkdirSync(bin, { recursive: true });
  const standIns: Record<string, string> = {
    node: `#!/bin/sh\nexec ${QEMU} ${ARM_NODE} "$@"\n`,
    pkg: '#!/bin/sh\nexit 0\n',
    uname: '#!/bin/sh\necho aarch64\n',
  };
  for (const [name, body] of Object.entries(standIns)) {
    writeFileSync(join(bin, name), body);
    chmodSync(join(bin, name), 0o755);
  }
  const prefix = join(work, 'usr');
  mkdirSync(join(prefix, 'tmp'), { recursive: true });
  return {
    PATH: `${bin}:${phone.bin}:${process.env.PATH}`,
    HOME: phone.home,
    PREFIX: prefix,
    TMPDIR: join(prefix, 'tmp'),
    GATELINK_GATE_NUMBER: GATE_NUMBER,
    GATELINK_GATE_NAME: 'Mill Lane gate',
  };
}

describe.skipIf(missing !== null)(
  'a phone that calls the gate, set up with one command (arm64, qemu-user)',
  () => {
    beforeAll(async () => {
      database = await createTestDatabase();
      cloud = await startTestCloud({
        database,
        ackTimeoutMs: 60_000,
        env: { RELEASE_PUBLIC_KEY: releaseKey.publicKey.base64 },
      });
      work = mkdtempSync(join(tmpdir(), 'gatelink-phone-'));
      phone = await FakeTermux.create('rejects');
      await phone.runWith(process.execPath);
    });

    afterAll(async () => {
      const pidFile = join(phone?.home ?? '', '.gatelink/controller.pid');
      if (existsSync(pidFile)) {
        try {
          process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      await cloud?.stop();
      await database?.close();
      await phone?.dispose();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it(
      'installs, pairs to the account whose code it is, and places a call for a company opening, journaled as such',
      async () => {
        const bytes = await release();
        const id = await injectRelease(cloud, bytes, signedRelease(releaseKey, bytes, { version: '1.0.0' }));
        await cloud.ops('POST', '/ops/rollouts', { release_id: id, target: 'all' });
        const customer = await createCustomer(cloud.ctx, { displayName: 'Olga' });
        const setup = await startPhoneSetup(cloud.ctx, { customerId: customer.id });

        const script = join(work, 'install-phone.sh');
        writeFileSync(script, await (await fetch(`${cloud.localUrl}/api/device/install/phone`)).text());
        const installed = await run('sh', [script, setup.provisioning_code], {
          env: phoneEnv(),
          timeout: EMULATED,
        });
        expect(installed.stdout).toContain('gatelink-device 1.0.0');
        expect(installed.stdout).toContain('Paired to your account');
        expect(readFileSync(join(phone.home, '.termux/boot/gatelink'), 'utf8')).toContain('termux-wake-lock');

        const [barrier] = await customerBarriers(cloud.ctx.db, customer.id);
        expect(barrier?.name).toBe('Mill Lane gate');
        await waitFor(
          async () => (await customerBarriers(cloud.ctx.db, customer.id))[0]?.online === true,
          'the phone controller to come online',
          EMULATED,
        );

        const company = await secretCompany(cloud, 'Demo Cleaning Ltd');
        const code = (await cloud.call('request', company)).body.code as string;
        await claimRequest(cloud.ctx, { code, customerId: customer.id });
        const object = await cloud.ctx.db
          .selectFrom('device_objects')
          .select(['id', 'kind'])
          .where('device_id', '=', barrier!.id)
          .executeTakeFirstOrThrow();
        expect(object.kind).toBe('phone');
        const { keyRef } = await issueAccessKey(cloud.ctx, {
          code,
          customerId: customer.id,
          deviceId: barrier!.id,
          objectIds: [object.id],
          keyExpiresAt: null,
        });
        const opened = await cloud.call('open', {
          ...company,
          key_ref: keyRef,
          number_id: object.id,
          actor: 'Anna, shift 2',
        });
        expect(opened.status, JSON.stringify(opened.body)).toBe(200);
        expect(await phone.dialled()).toEqual([GATE_NUMBER]);

        const client = await BrowserClient.signedIn(cloud, customer.id);
        const journal = visibleText((await client.get(`/barriers/${barrier!.id}/journal`)).html);
        expect(journal).toContain('Anna, shift 2');
        expect(journal).toContain('Called the gate from your phone');
        const log = readFileSync(join(phone.home, '.gatelink/controller.log'), 'utf8');
        expect(log).toMatch(/command \S+ \(gate\): opened/);
      },
      EMULATED * 3,
    );
  },
);

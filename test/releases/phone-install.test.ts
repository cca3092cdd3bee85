import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The phone installer's refusals (docs/design.md section 9.3), each one line that says what to do, before it
 * installs or downloads anything. Its whole run, to a phone placing a call, is test/arm64/phone-arm64.test.ts.
 */
const run = promisify(execFile);
let database: TestDatabase;
let cloud: TestCloud;
let work: string;
let script: string;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  work = mkdtempSync(join(tmpdir(), 'gatelink-phone-install-'));
  script = join(work, 'install-phone.sh');
  writeFileSync(script, await (await fetch(`${cloud.localUrl}/api/device/install/phone`)).text());
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Runs the script with `args`; `termux` gives it Termux's PREFIX and a `pkg` that notes being run. */
async function install(args: string[], options: { termux: boolean; arch?: string }) {
  const bin = mkdtempSync(join(work, 'bin-'));
  const noted = join(bin, 'pkg-ran');
  const standIns: Record<string, string> = {
    uname: `#!/bin/sh\necho ${options.arch ?? 'aarch64'}\n`,
    ...(options.termux ? { pkg: `#!/bin/sh\ntouch ${noted}\n` } : {}),
  };
  for (const [name, body] of Object.entries(standIns)) {
    writeFileSync(join(bin, name), body);
    chmodSync(join(bin, name), 0o755);
  }
  const prefix = join(work, 'usr');
  mkdirSync(prefix, { recursive: true });
  const env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: work,
    ...(options.termux ? { PREFIX: prefix } : {}),
  };
  const result = await run('sh', [script, ...args], { env }).then(
    (done) => ({ code: 0, ...done }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  return { ...result, pkgRan: (await import('node:fs')).existsSync(noted) };
}

describe('the phone installer', () => {
  it('asks for the whole command when the set-up code is missing', async () => {
    const ran = await install([], { termux: true });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('the set-up code is missing: copy the whole command');
    expect(ran.pkgRan).toBe(false);
  });

  it('runs only in Termux', async () => {
    const ran = await install(['ABCD-EFGH-JKMN-PQRS'], { termux: false });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('run it in Termux on the phone that calls the gate');
  });

  it('refuses a phone whose CPU no release is built for', async () => {
    const ran = await install(['ABCD-EFGH-JKMN-PQRS'], { termux: true, arch: 'armv7l' });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('a phone with a 64-bit Android is needed');
    expect(ran.pkgRan).toBe(false);
  });

  it('says whom to tell when the cloud has no release for the phone', async () => {
    const ran = await install(['ABCD-EFGH-JKMN-PQRS'], { termux: true });
    expect(ran.code).toBe(1);
    expect(ran.pkgRan).toBe(true);
    expect(ran.stderr).toContain('the cloud has no release for arm64 to give');
  });
});

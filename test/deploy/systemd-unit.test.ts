import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The shipped unit (deploy/systemd/gatelink-cloud.service) keeps its hardening: read as systemd reads it, and
 * checked by systemd-analyze where it is installed. MemoryDenyWriteExecute must stay off: V8 writes the
 * machine code it compiles, and a cloud under it would crash at start.
 */
const UNIT = resolve(import.meta.dirname, '../../deploy/systemd/gatelink-cloud.service');
const ANALYZE = '/usr/bin/systemd-analyze';
const run = promisify(execFile);

/** Each key's values in the unit's [Service] section, in order (a key may be repeated). */
function serviceSection(): Map<string, string[]> {
  const values = new Map<string, string[]>();
  let section = '';
  for (const raw of readFileSync(UNIT, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    if (section !== 'Service') continue;
    const at = line.indexOf('=');
    const key = line.slice(0, at);
    values.set(key, [...(values.get(key) ?? []), line.slice(at + 1)]);
  }
  return values;
}

describe('the systemd unit', () => {
  const service = serviceSection();
  const one = (key: string) => service.get(key)?.at(-1);

  it('runs the compiled cloud as an unprivileged user with its data folder and environment file', () => {
    expect(one('ExecStart')).toBe('/usr/bin/node /opt/gatelink-cloud/current/bin/gatelink-cloud.mjs');
    expect(one('User')).toBe('gatelink');
    expect(one('StateDirectory')).toBe('gatelink');
    expect(service.get('Environment')).toContain('GATELINK_DATA_DIR=/var/lib/gatelink');
    expect(service.get('Environment')).toContain('NODE_ENV=production');
    expect(one('EnvironmentFile')).toBe('/etc/gatelink/cloud.env');
    expect(one('Restart')).toBe('on-failure');
    expect(one('TimeoutStopSec')).toBe('30s');
  });

  it('is hardened, without MemoryDenyWriteExecute', () => {
    for (const [key, value] of [
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['NoNewPrivileges', 'yes'],
      ['CapabilityBoundingSet', ''],
    ]) {
      expect(one(key!), key).toBe(value);
    }
    expect(one('RestrictAddressFamilies')).toBe('AF_INET AF_INET6 AF_UNIX AF_NETLINK');
    expect(service.get('SystemCallFilter')?.[0]).toBe('@system-service');
    expect(service.has('MemoryDenyWriteExecute')).toBe(false);
  });

  it.skipIf(!existsSync(ANALYZE))('passes systemd-analyze verify', async () => {
    // systemd-analyze checks that ExecStart's program exists: this machine's Node.js may live elsewhere.
    const folder = mkdtempSync(join(tmpdir(), 'gatelink-unit-'));
    const copy = join(folder, 'gatelink-cloud.service');
    writeFileSync(
      copy,
      readFileSync(UNIT, 'utf8').replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `),
    );
    try {
      const { stdout, stderr } = await run(ANALYZE, ['verify', copy]);
      expect(`${stdout}${stderr}`.trim()).toBe('');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

if (!existsSync(ANALYZE))
  console.warn('systemd-unit: systemd-analyze skipped, not installed (apt-get install systemd)');

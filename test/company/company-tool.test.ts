import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKeyFile } from '../../cloud/rules/domain-keys/keyfile-parse.js';
import { readKeyFile } from '../../company/key-file.js';
import { runCompanyTool } from '../../company/tool.js';
import { strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import { baseString } from '../../shared/crypto/request-signing.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * `gatelink-company` (docs/design.md section 11.2) as a company runs it: keygen's output is what the service's
 * own key-file parser accepts, the private key is readable by its owner only and never overwritten, a call it
 * signs is accepted by a running cloud, and prove signs nothing but a key proof text.
 */
const keyFiles = new KeyFileServer();
let database: TestDatabase;
let cloud: TestCloud;
let folder: string;

beforeAll(async () => {
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  folder = mkdtempSync(join(tmpdir(), 'gatelink-company-'));
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await keyFiles.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** Runs the tool in this process, with what it prints. */
async function tool(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCompanyTool(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

let files = 0;
const newPath = () => join(folder, `key-${++files}.json`);

/** The service.json keygen printed: the one line that is a JSON object. */
function printedKeyFile(out: string): string {
  return out.split('\n').find((line) => line.startsWith('{'))!;
}

describe('keygen', () => {
  it('writes a 0600 key file and prints a key file the service accepts, where to publish it and its fingerprint', async () => {
    const path = newPath();
    const run = await tool('keygen', '--domain', 'bücher.example', '--out', path);
    expect(run.code, run.err).toBe(0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const published = printedKeyFile(run.out);
    const parsed = parseKeyFile(new TextEncoder().encode(published), 'bücher.example');
    expect(parsed.ok).toBe(true);
    const key = readKeyFile(path);
    expect(key.domain).toBe('xn--bcher-kva.example');
    expect(parsed.ok && parsed.key.base64).toBe(key.key.publicKey.base64);
    expect(run.out).toContain('https://xn--bcher-kva.example/.well-known/service.json');
    expect(run.out).toContain(`as Gatelink shows it: ${key.key.publicKey.fingerprint}`);
    expect(readFileSync(path, 'utf8')).toContain('BEGIN PRIVATE KEY');
  });

  it('names its next step the way it was run: through npm in this repository, else the installed command', async () => {
    const printed = async (env: Record<string, string>) => {
      let out = '';
      const code = await runCompanyTool(
        ['keygen', '--domain', 'example.com', '--out', newPath()],
        { out: (t) => (out += t), err: () => {} },
        env,
      );
      expect(code).toBe(0);
      return out;
    };
    expect(await printed({ npm_lifecycle_event: 'company' })).toContain(
      'prove you hold the key with: npm run company -- prove --key ',
    );
    const installed = await printed({});
    expect(installed).toContain('prove you hold the key with: gatelink-company prove --key ');
    expect(installed).not.toContain('npm run');
  });

  it('--service-json writes the file to publish as it is, and --json prints the same facts', async () => {
    const path = newPath();
    const published = join(folder, `service-${files}.json`);
    const run = await tool('keygen', '--domain', 'files.example', '--out', path, '--service-json', published);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain(`It is written to ${published}, to publish as it is.`);
    const parsed = parseKeyFile(readFileSync(published), 'files.example');
    expect(parsed.ok && parsed.key.base64).toBe(readKeyFile(path).key.publicKey.base64);
    expect(`${printedKeyFile(run.out)}\n`).toBe(readFileSync(published, 'utf8'));

    const again = newPath();
    const json = await tool('keygen', '--domain', 'files.example', '--out', again, '--json');
    const key = readKeyFile(again).key.publicKey;
    expect(JSON.parse(json.out)).toEqual({
      key_file: again,
      domain: 'files.example',
      public_key: key.base64,
      fingerprint: key.fingerprint,
      publish_at: 'https://files.example/.well-known/service.json',
      service_json: { key: key.base64 },
    });
  });

  it('refuses an existing --service-json before writing any key', async () => {
    const path = newPath();
    const published = join(folder, 'published.json');
    writeFileSync(published, '{"key":"the one published now"}');
    const run = await tool('keygen', '--domain', 'example.com', '--out', path, '--service-json', published);
    expect(run.code).toBe(2);
    expect(run.err).toContain(`${published} exists already; it may be the file your domain publishes now`);
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(published, 'utf8')).toBe('{"key":"the one published now"}');
  });

  it('refuses to overwrite an existing key file, leaving it as it was', async () => {
    const path = newPath();
    await tool('keygen', '--domain', 'example.com', '--out', path);
    const before = readFileSync(path, 'utf8');
    const again = await tool('keygen', '--domain', 'example.com', '--out', path);
    expect(again.code).toBe(2);
    expect(again.err).toContain('exists already');
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('says what is wrong with its arguments', async () => {
    expect((await tool('keygen')).err).toContain('--domain is missing');
    expect((await tool('keygen', '--domain', 'not a domain')).err).toContain('is not a domain');
    expect((await tool('keygen', '--colour')).err).toContain("Unknown option '--colour'");
    expect((await tool('launch')).err).toContain('unknown command "launch"');
    expect((await tool('keygen', '--help')).out).toContain('Usage: gatelink-company keygen');
    expect((await tool('--help')).out).toMatch(/keygen[\s\S]*prove[\s\S]*sign/);
    const broken = newPath();
    writeFileSync(broken, '{"key": 1}');
    expect((await tool('prove', '--key', broken, '--text', 'gatelink-key-proof:v1:x')).err).toContain(
      'is not a key file made by keygen',
    );
    expect((await tool('prove', '--key', join(folder, 'none.json'), '--text', 'x')).err).toContain(
      'no key file',
    );
  });
});

describe('sign and prove', () => {
  let keyPath: string;
  const domain = 'tool-company.example';

  beforeAll(async () => {
    keyPath = newPath();
    const made = await tool('keygen', '--domain', domain, '--out', keyPath);
    keyFiles.publishRaw(domain, printedKeyFile(made.out));
    const created = await cloud.ops('POST', '/ops/companies', { name: 'Tool Company', domain });
    const id = (created.body.company as { id: number }).id;
    expect((await cloud.ops('POST', `/ops/companies/${id}/approve`)).status).toBe(200);
  });

  it('a call signed and sent by the tool is accepted by the cloud', async () => {
    const made = await tool(
      'sign',
      '--key',
      keyPath,
      '--url',
      cloud.baseUrl,
      '--action',
      'request',
      '--body',
      '{"ref":"ORD-9"}',
    );
    expect(made.code, made.out + made.err).toBe(0);
    expect(made.out).toMatch(/^HTTP 200\n/);
    const code = (JSON.parse(made.out.slice('HTTP 200\n'.length)) as { code: string }).code;
    const status = await tool(
      'sign',
      '--key',
      keyPath,
      '--url',
      `${cloud.baseUrl}/`,
      '--action',
      'status',
      '--code',
      code,
    );
    expect(status.code, status.out).toBe(0);
    expect(status.out).toContain('"ref": "ORD-9"');
  });

  it('prints a curl command that the cloud accepts once', async () => {
    const printed = await tool(
      'sign',
      '--key',
      keyPath,
      '--url',
      cloud.baseUrl,
      '--action',
      'request',
      '--print',
    );
    expect(printed.code).toBe(0);
    const headers = Object.fromEntries(
      [...printed.out.matchAll(/-H '([^:]+): ([^']+)'/g)].map((match) => [match[1]!, match[2]!]),
    );
    const body = /--data-raw '([^']*)'/.exec(printed.out)![1]!;
    expect(printed.out).toContain(`curl -sS -X POST '${cloud.baseUrl}/api/company.php?a=request'`);
    const send = () => cloud.call('request', body, headers);
    expect((await send()).status).toBe(200);
    expect((await send()).body.error).toBe('nonce_reused');
  });

  it('a refused call exits 1 with the answer printed', async () => {
    const other = newPath();
    await tool('keygen', '--domain', 'unknown-company.example', '--out', other);
    const refused = await tool(
      'sign',
      '--key',
      other,
      '--url',
      cloud.baseUrl,
      '--action',
      'status',
      '--code',
      'X',
    );
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('HTTP 401');
    expect(refused.out).toContain('"error": "unknown_org"');
    expect(
      (await tool('sign', '--key', keyPath, '--url', cloud.baseUrl, '--action', 'delete')).err,
    ).toContain('--action delete is not one of request, status, open');
    expect(
      (await tool('sign', '--key', keyPath, '--url', cloud.baseUrl, '--action', 'request', '--body', '[1]'))
        .err,
    ).toContain('must be a JSON object');
  });

  it('sign and prove with --json print one JSON object, a refusal included', async () => {
    const sent = await tool(
      'sign',
      '--key',
      keyPath,
      '--url',
      cloud.baseUrl,
      '--action',
      'request',
      '--json',
    );
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.out)).toMatchObject({ code: expect.any(String), url: expect.any(String) });
    const refused = await tool(
      'sign',
      '--key',
      keyPath,
      '--url',
      cloud.baseUrl,
      '--action',
      'status',
      '--code',
      'AAAAAAAAAAAA',
      '--json',
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.out)).toEqual({
      error: 'not_found',
      message: expect.any(String),
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const printed = await tool(
      'sign',
      '--key',
      keyPath,
      '--url',
      cloud.baseUrl,
      '--action',
      'request',
      '--print',
      '--json',
    );
    const call = JSON.parse(printed.out) as { url: string; headers: Record<string, string>; body: string };
    expect((await cloud.call('request', call.body, call.headers)).status).toBe(200);

    const text = 'gatelink-key-proof:v1:gate.example:7:tool-company.example:abcd';
    const proved = await tool('prove', '--key', keyPath, '--text', text, '--json');
    const plain = await tool('prove', '--key', keyPath, '--text', text);
    expect(JSON.parse(proved.out)).toEqual({ signature: plain.out.trim() });
  });

  it('prove prints the signature of the proof text, verified by the public key', async () => {
    const text = 'gatelink-key-proof:v1:gate.example:7:tool-company.example:abcd';
    const run = await tool('prove', '--key', keyPath, '--text', text);
    expect(run.code).toBe(0);
    const key = strictPublicKeyFromBase64(readKeyFile(keyPath).key.publicKey.base64);
    expect(key.verify(new TextEncoder().encode(text), Buffer.from(run.out.trim(), 'base64'))).toBe(true);
  });

  it('[attack:company.tool-signs-call-as-proof] prove refuses any text but a key proof text', async () => {
    const call = baseString(domain, '1700000000', 'a'.repeat(32), '{"a":1}');
    const run = await tool('prove', '--key', keyPath, '--text', call);
    expect(run.code).toBe(2);
    expect(run.out).toBe('');
    expect(run.err).toContain('nothing else is signed');
  });

  it('runs as the gatelink-company command', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'gatelink-company.mjs');
    const { stdout } = await promisify(execFile)(process.execPath, [bin, 'prove', '--help']);
    expect(stdout).toContain('Usage: gatelink-company prove');
  });

  it('as a program, signs with company-key.json of the current folder when nothing else is given', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'gatelink-company.mjs');
    const here = mkdtempSync(join(folder, 'cwd-'));
    copyFileSync(keyPath, join(here, 'company-key.json'));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [bin, 'request', '--ref', 'CWD', '--json'],
      {
        cwd: here,
        env: { PATH: process.env.PATH, GATELINK_URL: cloud.baseUrl },
      },
    );
    const code = (JSON.parse(stdout) as { code: string }).code;
    const signer = { domain, key: readKeyFile(keyPath).key };
    expect((await cloud.signedCall('status', { code }, signer)).body).toMatchObject({ ref: 'CWD' });
  });
});

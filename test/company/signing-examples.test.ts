import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKeyFile } from '../../company/key-file.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * The signing programs of cloud/README.md "Signing a call in Node.js, Python and Go", taken from the README
 * verbatim (a block is found by its fence and the file name on its first line), run against every published
 * vector and once against a running cloud. Python needs the `cryptography` package and Go its toolchain; a
 * suite without them skips and says what to install (README.md "Test it").
 */
interface Vectors {
  secret_seed_hex: string;
  cases: {
    name: string;
    headers: Record<string, string>;
    body: string;
    valid: boolean;
  }[];
}

const vectors = JSON.parse(
  readFileSync(new URL('../vectors/request-signing.json', import.meta.url), 'utf8'),
) as Vectors;
const readme = readFileSync(new URL('../../cloud/README.md', import.meta.url), 'utf8');
const INSTALL = 'apt-get install python3-cryptography golang-go';

/** The block fenced as `language` whose first line names `file`, exactly as the README holds it. */
function exampleFromReadme(language: string, file: string): string {
  const comment = language === 'python' ? '#' : '//';
  const fence = `\`\`\`${language}\n${comment} ${file}:`;
  const start = readme.indexOf(fence);
  if (start < 0) throw new Error(`cloud/README.md has no ${language} block starting "${comment} ${file}:"`);
  const code = readme.slice(start + `\`\`\`${language}\n`.length);
  return code.slice(0, code.indexOf('\n```\n') + 1);
}

/** An interpreter that can import the `cryptography` package's Ed25519, Debian's first. */
function pythonWithCryptography(): string | undefined {
  return ['/usr/bin/python3', 'python3'].find(
    (python) =>
      spawnSync(python, ['-c', 'import cryptography.hazmat.primitives.asymmetric.ed25519'], {
        stdio: 'ignore',
      }).status === 0,
  );
}

const hasGo = spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
const python = pythonWithCryptography();

interface Example {
  name: string;
  file: string;
  language: string;
  /** Why the suite skips, or undefined when the toolchain is there. */
  missing: string | undefined;
  /** Makes the program runnable in `folder`; resolves to its command line. */
  prepare(folder: string, env: NodeJS.ProcessEnv): Promise<string[]>;
}

const EXAMPLES: Example[] = [
  {
    name: 'Node.js',
    file: 'sign-call.mjs',
    language: 'js',
    missing: undefined,
    prepare: async (folder) => [process.execPath, join(folder, 'sign-call.mjs')],
  },
  {
    name: 'Python',
    file: 'sign_call.py',
    language: 'python',
    missing: python ? undefined : `no python3 with the cryptography package (${INSTALL})`,
    prepare: async (folder) => [python!, join(folder, 'sign_call.py')],
  },
  {
    name: 'Go',
    file: 'sign_call.go',
    language: 'go',
    missing: hasGo ? undefined : `the Go toolchain is not installed (${INSTALL})`,
    // Built once rather than `go run` for every case: the same compiler, without compiling it each time.
    prepare: async (folder, env) => {
      await promisify(execFile)('go', ['build', '-o', 'sign_call', 'sign_call.go'], { cwd: folder, env });
      return [join(folder, 'sign_call')];
    },
  },
];

for (const example of EXAMPLES) {
  if (example.missing) console.warn(`${example.name} signing example skipped: ${example.missing}`);
}

const keyFiles = new KeyFileServer();
let database: TestDatabase;
let cloud: TestCloud;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gatelink-examples-'));
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await keyFiles.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** The environment a company would run in, without this process's own settings leaking in. */
function baseEnv(folder: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: folder,
    LANG: 'C.UTF-8',
    GOCACHE: join(folder, 'go-cache'),
    GOPATH: join(folder, 'go-path'),
    GOFLAGS: '-mod=mod',
    GOTOOLCHAIN: 'local',
    GOPROXY: 'off',
  };
}

/** What the program printed as `Name: value` lines. */
function printedHeaders(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  );
}

let keyFileCount = 0;
/** A key file as keygen writes it, for `domain`. */
function keyFileFor(folder: string, domain: string, key: SigningKey): string {
  const path = join(folder, `key-${++keyFileCount}.json`);
  writeKeyFile(path, { domain, key });
  return path;
}

for (const example of EXAMPLES) {
  describe(`the ${example.name} signing example`, { skip: example.missing !== undefined }, () => {
    let folder: string;
    let command: string[];
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      folder = join(root, example.language);
      mkdirSync(folder);
      writeFileSync(join(folder, example.file), exampleFromReadme(example.language, example.file));
      env = baseEnv(folder);
      command = await example.prepare(folder, env);
    }, 180_000);

    const run = async (args: string[], extra: NodeJS.ProcessEnv) => {
      const [program, ...before] = command;
      try {
        const { stdout, stderr } = await promisify(execFile)(program!, [...before, ...args], {
          cwd: folder,
          env: { ...env, ...extra },
        });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const failed = error as { code?: number; stdout?: string; stderr?: string };
        return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
      }
    };

    const seed = Buffer.from(vectors.secret_seed_hex, 'hex');
    for (const vector of vectors.cases.filter((entry) => entry.valid)) {
      it(`prints the published headers for the vector "${vector.name}"`, async () => {
        const domain = vector.headers['X-Service-Org']!;
        const printed = await run(['request', vector.body], {
          GATELINK_KEY_FILE: keyFileFor(folder, domain, SigningKey.fromSeed(seed)),
          GATELINK_TS: vector.headers['X-Service-Ts'],
          GATELINK_NONCE: vector.headers['X-Service-Nonce'],
        });
        expect(printed.code, printed.stderr).toBe(0);
        expect(printedHeaders(printed.stdout)).toEqual(vector.headers);
      });
    }

    it('makes a request that a running cloud answers with 200 and a code', async () => {
      const domain = `${example.language}-example.example`;
      const { signer } = await signatureCompany(cloud, keyFiles, domain);
      const sent = await run(['request', '{"ref":"ORD-1","ttl_hours":24}'], {
        GATELINK_KEY_FILE: keyFileFor(folder, domain, signer.key),
        GATELINK_URL: cloud.baseUrl,
      });
      expect(sent.code, sent.stdout + sent.stderr).toBe(0);
      const [status, ...answer] = sent.stdout.trim().split(' ');
      expect(status).toBe('200');
      expect(JSON.parse(answer.join(' '))).toMatchObject({ code: expect.stringMatching(/^[0-9A-Z]{12}$/) });
    });
  });
}

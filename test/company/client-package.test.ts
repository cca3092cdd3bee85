import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What a company installs (docs/design.md section 11.6): the client's files import shared/, the key file reader,
 * Node's built-ins and zod, never cloud/ or device/, so that nothing of the server ships with it. And the package
 * itself, as `npm pack` makes it from the build (the test run's global setup builds dist/), installed into an
 * empty project: it brings the client and the companies' tool, and none of the server's or the controller's
 * packages.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
/** Packages of the cloud, the controller or development: none may come with the client. */
const NOT_FOR_A_COMPANY = [
  'serialport',
  'onoff',
  'epoll',
  'mqtt',
  'yaml',
  'fastify',
  'aedes',
  '@electric-sql/pglite',
  'sharp',
  'kysely',
  'pg',
  'preact',
  'nodemailer',
  '@simplewebauthn/server',
  'tsx',
  'typescript',
];
const CLIENT = join(ROOT, 'company/client');
const ALLOWED = [/^node:/, /^zod$/, /^\.\/[a-z-]+\.js$/, /^\.\.\/\.\.\/shared\//, /^\.\.\/key-file\.js$/];

/** Every module a file names in an import or export `from`, its comments left out. */
function specifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(/\bfrom\s+'([^']+)'/g)].map((match) => match[1]!);
}

describe('the client package', () => {
  it('imports only shared/, the key file, Node and zod', () => {
    const files = readdirSync(CLIENT).filter((name) => name.endsWith('.ts'));
    expect(files).toContain('index.ts');
    const outside = files.flatMap((name) =>
      specifiers(readFileSync(join(CLIENT, name), 'utf8'))
        .filter((specifier) => !ALLOWED.some((allowed) => allowed.test(specifier)))
        .map((specifier) => `${name}: ${specifier}`),
    );
    expect(outside).toEqual([]);
  });

  it('is the package entry, with its types', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    expect(manifest.exports['./client']).toEqual({
      types: './dist/company/client/index.d.ts',
      default: './dist/company/client/index.js',
    });
  });
});

/** The package names installed under a node_modules folder, nested ones too. */
function installed(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  return readdirSync(nodeModules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(nodeModules, name)).map((inner) => `${name}/${inner}`) : [name],
    )
    .flatMap((name) => [name, ...installed(join(nodeModules, name, 'node_modules'))]);
}

describe('the packed package, installed into an empty project', () => {
  let work: string;
  let project: string;
  let files: string[];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'gatelink-pack-'));
    project = join(work, 'project');
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      cwd: ROOT,
    });
    const [tarball] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    files = tarball!.files.map((file) => file.path);
    await run('mkdir', [project]);
    await writeFile(join(project, 'package.json'), '{ "name": "a-company", "private": true }\n');
    await run(
      'npm',
      [
        'install',
        join(work, tarball!.filename),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      { cwd: project, timeout: 120_000 },
    );
  }, 180_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('holds the compiled client, the tool and shared/, nothing of the cloud or the controller', () => {
    const outside = files.filter(
      (path) =>
        !/^dist\/(company|shared)\/.+\.(js|d\.ts)$/.test(path) &&
        !['package.json', 'README.md', 'bin/gatelink-company.mjs'].includes(path),
    );
    expect(outside).toEqual([]);
    expect(files).toContain('dist/company/client/index.js');
    expect(files).toContain('dist/company/client/index.d.ts');
  });

  it('installs with its own dependencies alone: no serialport, onoff or package of the cloud', () => {
    const names = installed(join(project, 'node_modules'));
    expect(NOT_FOR_A_COMPANY.filter((name) => names.includes(name))).toEqual([]);
    expect(names.sort()).toEqual(['@noble/ed25519', 'gatelink', 'qrcode-terminal', 'zod']);
  });

  it('gives gatelink/client to the project and gatelink-company to its scripts', async () => {
    const imported = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('gatelink/client'); console.log(typeof m.GatelinkClient, typeof m.verifyWebhook);",
      ],
      { cwd: project },
    );
    expect(imported.stdout.trim()).toBe('function function');
    const tool = await run(join(project, 'node_modules/.bin/gatelink-company'), ['--help'], { cwd: project });
    expect(tool.stdout).toContain('Usage: gatelink-company');
  });
});

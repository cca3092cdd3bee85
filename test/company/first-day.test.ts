import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { runProgram } from '../support/program-run.js';
import { ScriptedProxy } from '../support/scripted-proxy.js';
import { grantRequest, type SimulatedBarrier, simulatedBarrier } from '../support/simulated-barrier.js';

/**
 * The first day of a company's developer (cloud/README.md, "The TypeScript client"): a key pair made with the
 * company tool's keygen, its service.json published, the company approved by an operator, and then the README's
 * snippet, exactly as written, run by Node against the built package (`gatelink/client` from dist/, which the
 * test run's global setup builds), while a customer grants the request it shows.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'cloud/README.md'), 'utf8');
const DOMAIN = 'first-day.example';

/** The one ```ts block of the section. */
function readmeSnippet(): string {
  const section = README.slice(README.indexOf('## The TypeScript client'));
  const found = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!found) throw new Error('no ts example under "The TypeScript client"');
  return found;
}

let keyFiles: KeyFileServer;
let database: TestDatabase;
let cloud: TestCloud;
let barrier: SimulatedBarrier;
let project: string;
/** Between the snippet and the cloud, to see the snippet wait: it forwards everything. */
let proxy: ScriptedProxy;

beforeAll(async () => {
  keyFiles = new KeyFileServer();
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  barrier = await simulatedBarrier(cloud, 'Fiona');
  proxy = new ScriptedProxy(cloud.baseUrl);
  await proxy.start();
  // The developer's own project, with this copy of Gatelink installed in it as `npm install <folder>` does.
  project = mkdtempSync(join(tmpdir(), 'gatelink-first-day-'));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'gatelink'), 'dir');
});

afterAll(async () => {
  await proxy?.stop();
  await barrier?.stop();
  await cloud?.stop();
  await database?.close();
  await keyFiles?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the first day', () => {
  it('is at most ten lines', () => {
    expect(readmeSnippet().trimEnd().split('\n').length).toBeLessThanOrEqual(10);
  });

  it('type-checks as a strict TypeScript program against the built package', () => {
    const file = join(project, 'first-day.mts');
    writeFileSync(file, readmeSnippet());
    const program = ts.createProgram([file], {
      strict: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noEmit: true,
      skipLibCheck: true,
      typeRoots: [join(ROOT, 'node_modules/@types')],
      types: ['node'],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((problem) => ts.flattenDiagnosticMessageText(problem.messageText, '\n'));
    expect(problems).toEqual([]);
  });

  it('keygen, publish, approval, and the README snippet opens the barrier the customer granted', async () => {
    const keygen = await runProgram(
      [join(ROOT, 'bin/gatelink-company.mjs'), 'keygen', '--domain', DOMAIN, '--out', 'company-key.json'],
      { cwd: project, env: process.env },
    );
    expect(keygen.code, keygen.stderr).toBe(0);
    keyFiles.publishRaw(DOMAIN, keygen.stdout.split('\n').find((line) => line.startsWith('{'))!);
    const created = await cloud.ops('POST', '/ops/companies', { name: 'First Day Parcels', domain: DOMAIN });
    const companyId = (created.body.company as { id: number }).id;
    const approved = await cloud.ops('POST', `/ops/companies/${companyId}/approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    writeFileSync(join(project, 'first-day.mjs'), readmeSnippet());
    const before = barrier.driver.pulses.get('gate') ?? 0;
    const run = await runWhileGranting(join(project, 'first-day.mjs'));
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/^Show your customer this link as a QR code: http:\S+\/c\/[0-9A-Z]{12}$/m);
    expect(run.output).toMatch(/^Opened Main gate, journal entry \d+$/m);
    // It waited: one answer said the request was new, a later one that it was issued.
    expect(run.polls).toBeGreaterThanOrEqual(2);
    expect(barrier.driver.pulses.get('gate')).toBe(before + 1);
  });
});

/**
 * Runs the snippet. Once it has asked for its request's status and heard that the customer has not answered
 * yet, that is while it waits in `waitForAccess`, the customer opens the link and grants access.
 */
function runWhileGranting(file: string): Promise<{ code: number | null; output: string; polls: number }> {
  let granting: Promise<void> | undefined;
  let polls = 0;
  proxy.onAnswer = (seen, answer) => {
    if (!seen.url.endsWith('a=status')) return;
    polls += 1;
    const { code, state } = JSON.parse(answer.body) as { code: string; state: string };
    if (state === 'new' && !granting) granting = grantRequest(barrier, code);
  };
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [file], {
      cwd: project,
      env: { ...process.env, GATELINK_URL: proxy.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', fail);
    child.on('close', (code) => {
      void (granting ?? Promise.resolve()).then(() => done({ code, output, polls }), fail);
    });
  });
}

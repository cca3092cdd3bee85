import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The demo (`npm start`) as a newcomer meets it (README.md, "Try it"): it listens on this machine only and says
 * how to let a phone in; started again with other ports it keeps working with the data it has; and the operator
 * command it prints finds it. Started as `npm start` starts it (the build is made by the test setup).
 */
const ROOT = resolve('.');
const TSX = resolve(ROOT, 'node_modules/tsx/dist/cli.mjs');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');
const onPostgres = Boolean(process.env.DATABASE_URL);
if (onPostgres)
  console.log('demo-restart: the demo runs on its embedded database; this suite runs in the PGlite pass');

const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-demo-'));
let demo: ChildProcess | null = null;

afterAll(async () => {
  await stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The demo's environment: only what a person would set, never this process's database or operator settings. */
function demoEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const {
    DATABASE_URL: _d,
    OPERATOR_TOKEN: _t,
    GATELINK_URL: _u,
    HOST: _h,
    BASE_URL: _b,
    ...env
  } = process.env;
  return { ...env, GATELINK_DATA_DIR: dataDir, ...extra };
}

/** Starts the demo and resolves with what it printed once it is ready. */
async function start(extra: Record<string, string>): Promise<string> {
  let output = '';
  const child = spawn(process.execPath, [TSX, 'cloud/demo/main.ts'], {
    cwd: ROOT,
    env: demoEnv(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demo = child;
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await waitFor(
    () => output.includes('Play the company') || child.exitCode !== null,
    'the demo to start',
    120_000,
  );
  expect(child.exitCode, output).toBeNull();
  return output;
}

async function stop(): Promise<void> {
  const child = demo;
  demo = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGINT');
  await exited;
}

/** Runs step 1 as printed: the open of the demo barrier by the secret-mode company. */
async function openAsPrinted(output: string): Promise<unknown> {
  const step =
    /curl -s -X POST '([^']+a=open)' -H 'Content-Type: application\/json' \\\n\s+-d '([^']+)'/.exec(output);
  expect(step, output).not.toBeNull();
  const response = await fetch(step![1]!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: step![2]!,
  });
  return response.json();
}

/** Runs a command the demo printed, with the line breaks it printed, in a shell of the project's folder. */
function shellAsPrinted(output: string, command: RegExp): Promise<string> {
  const found = command.exec(output);
  expect(found, output).not.toBeNull();
  const text = found![1]!.replaceAll('\n   ', '\n');
  return new Promise((done) => {
    const child = spawn('sh', ['-c', text], { cwd: ROOT, env: demoEnv({}) });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('close', () => done(out));
  });
}

/** Does anything answer on `host:port`? */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

describe.skipIf(onPostgres)('the demo, started and started again', () => {
  it('listens on 127.0.0.1, says how to let a phone in, and keeps working with other ports', async () => {
    const [port, mqttPort] = [await freePort(), await freePort()];
    const first = await start({ PORT: String(port), MQTT_PORT: String(mqttPort) });
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
    if (lan) {
      expect(first).toContain(
        `GATELINK_DATA_DIR=${dataDir} MQTT_PORT=${mqttPort} PORT=${port} HOST=0.0.0.0 BASE_URL=http://${lan}:${port} npm start`,
      );
      expect(await answers(lan, port)).toBe(false);
      expect(await answers(lan, mqttPort)).toBe(false);
    } else {
      expect(first).toContain('this machine has no network address');
    }
    expect(await answers('127.0.0.1', port)).toBe(true);
    expect(await openAsPrinted(first)).toMatchObject({ ok: 1 });
    expect(await shellAsPrinted(first, /^ {3}(node --input-type=module -e "[\s\S]*?\)\);")$/m)).toMatch(
      /ok: 1, id: \d+/,
    );
    const scraped = await shellAsPrinted(first, /^ {2}metrics: (curl .*)$/m);
    expect(scraped).toMatch(
      /^gatelink_company_api_answers_total\{action="open",code="ok",status="200"\} 2$/m,
    );
    expect(first).toContain(`GATELINK_DATA_DIR=${dataDir} npm run admin -- journal`);
    // The operators' line pastes as one command, not as a shell pipe of three.
    expect(first).toContain(`Operators: GATELINK_DATA_DIR=${dataDir} npm run admin -- company list   (also`);
    expect(first).not.toMatch(/remove .*data|delete/i);
    await stop();

    const [port2, mqttPort2] = [await freePort(), await freePort()];
    const base = `http://127.0.0.1:${port2}`;
    const second = await start({ PORT: String(port2), MQTT_PORT: String(mqttPort2), BASE_URL: base });
    expect(second).toMatch(new RegExp(`^ {3}${base}/c/[0-9A-Z]+$`, 'm'));
    expect(await openAsPrinted(second)).toMatchObject({ ok: 1 });

    // The command the demo printed, in another terminal of the same folder: no --url, no token.
    const journal = await new Promise<string>((done) => {
      const child = spawn(process.execPath, [ADMIN, 'journal'], { cwd: ROOT, env: demoEnv({}) });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.on('close', () => done(out));
    });
    // Step 1 by curl and by the client at the first start, step 1 by curl at the second.
    expect(journal.match(/Anna, shift 2 +opened/g)).toHaveLength(3);
    expect(JSON.parse(readFileSync(join(dataDir, 'cloud-address.json'), 'utf8')).url).toBe(base);
    await stop();

    // Behind a proxy or tunnel: BASE_URL names an address this machine cannot reach, and the demo's own
    // controllers and calls still use the cloud's listening address.
    const [port3, mqttPort3] = [await freePort(), await freePort()];
    const third = await start({
      PORT: String(port3),
      MQTT_PORT: String(mqttPort3),
      BASE_URL: 'https://gate.invalid',
    });
    expect(third).toMatch(/^ {3}https:\/\/gate\.invalid\/c\/[0-9A-Z]+$/m);
    expect(
      await openAsPrinted(third.replaceAll('https://gate.invalid', `http://127.0.0.1:${port3}`)),
    ).toMatchObject({
      ok: 1,
    });
  }, 300_000);
});

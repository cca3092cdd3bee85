import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, startTestCloud, type TestCloud } from '../support/cloud.js';
import { type ControllerProcess, startControllerProcess } from '../support/controller-process.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ProvisionedGate, provisionGate } from '../support/provisioned-gate.js';
import { waitFor } from '../support/wait-for.js';

/**
 * One opening followed through the logs (docs/design.md section 8.1), as an operator would when a company
 * quotes its X-Request-Id: the cloud's JSON line with that `reqId` names the journal entry, the device and the
 * command id; the controller, a process of its own, logs the same command id when it acts on it.
 */

let database: TestDatabase;
let cloud: TestCloud;
let gate: ProvisionedGate;
let controller: ControllerProcess;
const dir = mkdtempSync(join(tmpdir(), 'gatelink-opening-logs-'));
const cloudLines: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    env: { LOG_LEVEL: 'info' },
    logStream: { write: (line) => cloudLines.push(...line.split('\n').filter(Boolean)) },
  });
  gate = await provisionGate(cloud);
  controller = await startControllerProcess(gate.configPath, join(dir, 'gate.log'));
  await gate.waitOnline();
});

afterAll(async () => {
  await controller?.stop();
  await gate?.remove();
  await cloud?.stop();
  await database?.close();
  rmSync(dir, { recursive: true, force: true });
});

type LogLine = Record<string, unknown>;

/** Every line the cloud logged, each one a JSON object (pino's). */
function cloudLog(): LogLine[] {
  return cloudLines.map((line) => JSON.parse(line) as LogLine);
}

/** The cloud's line about the opening the call with this answer made, found by the answer's X-Request-Id. */
function openingLine(answer: Answer): LogLine {
  const requestId = answer.headers['x-request-id'];
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  const lines = cloudLog().filter((line) => line.reqId === requestId && line.commandId !== undefined);
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('the logs of an opening', () => {
  it('lead from the X-Request-Id to the journal entry, the device and the command the controller logs', async () => {
    const answer = await gate.open(await gate.newKey());
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);

    const line = openingLine(answer);
    expect(line).toMatchObject({ journalId: answer.body.id, deviceId: gate.deviceId, outcome: 'opened' });
    const commandId = line.commandId as string;
    expect(commandId).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(
      async () => controller.output().includes(`command ${commandId} (gate): opened`),
      "the controller's line about the command",
    );
    // The acknowledgement the cloud applied names the same command and device.
    await waitFor(
      async () => cloudLog().some((l) => l.msg === 'acknowledgement' && l.commandId === commandId),
      "the cloud's line about the acknowledgement",
    );
    expect(cloudLog().find((l) => l.msg === 'acknowledgement' && l.commandId === commandId)).toMatchObject({
      deviceId: gate.deviceId,
      outcome: 'opened',
    });
  });

  it('are the same for a call with an Idempotency-Key', async () => {
    const answer = await gate.open(await gate.newKey(), { 'idempotency-key': 'logs-1' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const commandId = openingLine(answer).commandId as string;
    await waitFor(
      async () => controller.output().includes(`command ${commandId} (gate): opened`),
      "the controller's line about the command",
    );
  });

  it('every line the cloud wrote is structured', () => {
    expect(cloudLines.length).toBeGreaterThan(0);
    for (const line of cloudLog())
      expect(line).toMatchObject({ level: expect.any(Number), msg: expect.any(String) });
  });
});

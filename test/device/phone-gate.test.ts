import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { customerBarriers } from '../../cloud/rules/devices/customer-barriers.js';
import { startPhoneSetup } from '../../cloud/rules/devices/phone-setups.js';
import { main } from '../../device/cli/main.js';
import { askPhoneGate } from '../../device/cli/phone-gate.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { tempDir } from './fixtures.js';

/**
 * `gatelink-device provision --phone` (docs/design.md section 9.3): the gate's number and a name, asked at the
 * terminal until each holds by the config's own rules, or given as options; then provisioned with the
 * customer's set-up code, which pairs the phone to their account.
 */

/** Answers typed at a terminal, one per line, and what the questions printed. */
function terminal(answers: string[]) {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8');
  });
  input.end(answers.map((answer) => `${answer}\n`).join(''));
  return { io: { input, output }, printed: () => printed };
}

describe('the gate a phone calls', () => {
  it('asks again until the number holds, and keeps the digits of a number written with spaces', async () => {
    const typed = terminal(['the gate', '+49 170 123-4567', 'Mill Lane gate']);
    const gate = await askPhoneGate({}, typed.io);
    expect(gate).toEqual({ number: '+491701234567', label: 'Mill Lane gate' });
    expect(typed.printed()).toContain('expected a phone number such as +491701234567');
    expect(typed.printed().match(/The gate's phone number/g)).toHaveLength(2);
  });

  it('asks only what the options did not give, and refuses an option that does not hold', async () => {
    const typed = terminal(['Garage']);
    expect(await askPhoneGate({ number: '01701234567' }, typed.io)).toEqual({
      number: '01701234567',
      label: 'Garage',
    });
    expect(typed.printed()).not.toContain('phone number');
    await expect(askPhoneGate({ number: 'call me', label: 'Gate' }, terminal([]).io)).rejects.toMatchObject({
      code: 'phone_gate_invalid',
      message: expect.stringContaining('--number: expected a phone number'),
    });
  });

  it('says how to answer when there is no terminal to ask at', async () => {
    await expect(askPhoneGate({}, terminal([]).io)).rejects.toMatchObject({
      code: 'phone_gate_unanswered',
      message: expect.stringContaining('run it in Termux'),
    });
  });
});

describe('provision --phone', () => {
  let database: TestDatabase;
  let cloud: TestCloud;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({ database });
  });

  afterAll(async () => {
    await cloud?.stop();
    await database?.close();
  });

  it("writes the phone's config and pairs it to the account whose set-up code it is", async () => {
    const customer = await createCustomer(cloud.ctx, { displayName: 'Uma' });
    const setup = await startPhoneSetup(cloud.ctx, { customerId: customer.id });
    const dir = await tempDir();
    const said: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void said.push(line));
    let exit: number;
    try {
      exit = await main([
        'provision',
        '--phone',
        '--cloud',
        cloud.localUrl,
        '--code',
        setup.provisioning_code,
        '--number',
        '+491701234567',
        '--label',
        'Mill Lane gate',
        '--config',
        join(dir.dir, 'device.yaml'),
        '--state-dir',
        join(dir.dir, 'state'),
      ]);
    } finally {
      log.mockRestore();
    }
    expect(exit, said.join('\n')).toBe(0);
    expect(said.join('\n')).toContain('Paired to your account');
    expect(said.join('\n')).not.toContain('Pairing code');
    const config = parseYaml(await readFile(join(dir.dir, 'device.yaml'), 'utf8'));
    expect(config.objects).toEqual([
      { id: 'gate', label: 'Mill Lane gate', kind: 'phone', number: '+491701234567' },
    ]);
    expect(config.clock).toEqual({ check: 'none' });
    const barriers = await customerBarriers(cloud.ctx.db, customer.id);
    expect(barriers.map((barrier) => [barrier.id, barrier.name])).toEqual([
      [config.device_id, 'Mill Lane gate'],
    ]);
    // The number it dials reaches the cloud, so that its owner can call the gate while the phone is offline.
    const objects = await cloud.ctx.db
      .selectFrom('device_objects')
      .select(['kind', 'gate_number'])
      .where('device_id', '=', config.device_id)
      .execute();
    expect(objects).toEqual([{ kind: 'phone', gate_number: '+491701234567' }]);
  });
});

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ATTACKS, type Attack } from './catalogue.js';
import { ROOT, tagsIn } from './tags.js';

/**
 * `npm run attacks`: every attack the project defends against (catalogue.ts), with the tests that try it and
 * their results, in one list. It runs the tests tagged `[attack:<id>]` on the database the environment names
 * (DATABASE_URL for PostgreSQL, the embedded one otherwise). `npm run attacks -- --list` prints the list
 * without running anything. Exits non-zero when an attack has no test or a test of one failed.
 */

type Status = 'passed' | 'failed' | 'skipped';

interface TestResult {
  file: string;
  name: string;
  status: Status;
}

interface VitestReport {
  testResults: {
    name: string;
    assertionResults: { fullName: string; status: string }[];
  }[];
}

function runTaggedTests(): TestResult[] {
  const folder = mkdtempSync(join(tmpdir(), 'gatelink-attacks-'));
  const report = join(folder, 'report.json');
  try {
    process.stdout.write('Running every test that tries an attack (this takes a few minutes)...\n');
    const run = spawnSync(
      'npx',
      [
        'vitest',
        'run',
        '-t',
        '\\[attack:',
        '--reporter=dot',
        '--reporter=json',
        `--outputFile.json=${report}`,
      ],
      { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], env: process.env },
    );
    if (run.error) throw run.error;
    const parsed = JSON.parse(readFileSync(report, 'utf8')) as VitestReport;
    return parsed.testResults.flatMap((file) =>
      file.assertionResults
        .filter((test) => tagsIn(test.fullName).length > 0)
        .map((test) => ({
          file: file.name.replace(`${ROOT}/`, ''),
          name: test.fullName,
          status: test.status === 'passed' || test.status === 'failed' ? test.status : 'skipped',
        })),
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function verdict(tests: TestResult[]): string {
  if (tests.length === 0) return 'NO TEST';
  if (tests.some((test) => test.status === 'failed')) return 'FAILED';
  if (tests.every((test) => test.status === 'skipped')) return 'skipped';
  return 'defended';
}

/** Lists at most this many tests of one attack in full; past it, only the ones that did not pass. */
const LISTED = 6;

function printAttack(attack: Attack, tests: TestResult[] | null): void {
  const result = tests === null ? '' : `  ${verdict(tests)}`;
  process.stdout.write(`\n${attack.id}${result}\n  ${attack.attack}\n  required by: ${attack.source}\n`);
  if (!tests) return;
  const shown = tests.length > LISTED ? tests.filter((test) => test.status !== 'passed') : tests;
  for (const test of shown)
    process.stdout.write(`    ${test.status.padEnd(7)} ${test.file} › ${test.name}\n`);
  if (shown.length < tests.length) {
    process.stdout.write(`    ${tests.length - shown.length} of ${tests.length} tests passed\n`);
  }
}

function main(): number {
  if (process.argv.includes('--list')) {
    for (const attack of ATTACKS) printAttack(attack, null);
    process.stdout.write(`\n${ATTACKS.length} attacks\n`);
    return 0;
  }
  const results = runTaggedTests();
  const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'the embedded database (PGlite)';
  process.stdout.write(`\nAttacks and the tests that try them, on ${database}:\n`);
  const tally = new Map<string, number>();
  for (const attack of ATTACKS) {
    const tests = results.filter((test) => tagsIn(test.name).includes(attack.id));
    printAttack(attack, tests);
    tally.set(verdict(tests), (tally.get(verdict(tests)) ?? 0) + 1);
  }
  const tests = results.length;
  const counts = [...tally].map(([label, count]) => `${count} ${label}`).join(', ');
  process.stdout.write(`\n${ATTACKS.length} attacks: ${counts}; ${tests} tests\n`);
  return (tally.get('FAILED') ?? 0) + (tally.get('NO TEST') ?? 0) > 0 ? 1 : 0;
}

process.exitCode = main();

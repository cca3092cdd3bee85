import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';

/**
 * `npm run fuzz`: the property-based suites of test/fuzz with many more cases than `npm test` runs, from a new
 * seed each time (or FUZZ_SEED). Arguments pass through to vitest, so `npm run fuzz -- company-api` picks one.
 * A failure prints its seed and counterexample: keep it as a plain test beside the property.
 */
const seed = process.env.FUZZ_SEED ?? String(randomInt(1, 2 ** 31 - 1));
const runs = process.env.FUZZ_RUNS ?? '2000';
process.stdout.write(`fuzz: ${runs} cases per property, seed ${seed} (replay with FUZZ_SEED=${seed})\n`);
const result = spawnSync('npx', ['vitest', 'run', 'test/fuzz', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_SEED: seed, FUZZ_RUNS: runs },
});
process.exitCode = result.status ?? 1;

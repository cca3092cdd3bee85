import type { Parameters } from 'fast-check';

/**
 * How the property-based suites run. In `npm test` (and CI) every property runs a fixed number of cases from a
 * fixed seed, so a run is repeatable and bounded in time; `npm run fuzz` (test/fuzz/run.ts) raises the count
 * and draws a new seed each time, printing it so that a failure can be replayed with FUZZ_SEED.
 * A failure found either way is kept as a plain test beside the property that found it.
 */
const FIXED_SEED = 20_261_123;

function positive(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/**
 * fast-check parameters for one property: `runs` cases in the suite, or FUZZ_RUNS in a long run.
 * `interruptAfterTimeLimit` is never set: a property that runs out of time must fail loudly, not pass quietly.
 */
export function fuzzParameters<T>(runs: number): Parameters<T> {
  return {
    seed: positive('FUZZ_SEED') ?? FIXED_SEED,
    numRuns: positive('FUZZ_RUNS') ?? runs,
    endOnFailure: true,
  };
}

/** Per-test time limit for a property: generous in the suite, unbounded in a long run. */
export const fuzzTimeoutMs = positive('FUZZ_RUNS') ? 0 : 120_000;

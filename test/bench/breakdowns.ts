import { type Breakdown, formatBreakdown, profiled } from './cpu-breakdown.js';
import type { Figures } from './measure.js';
import { formatRoundTrips, type RoundTrips } from './round-trips.js';

/** One operation's time on the measured thread by category, and how many operations it was taken over. */
export interface OperationBreakdown {
  breakdown: Breakdown;
  operations: number;
}

/**
 * Runs `run` once more, untimed, under the CPU profile and the statement timer, and prints one operation's
 * breakdown: the thread's time by category (./cpu-breakdown.ts) and the database statements with their time
 * (./round-trips.ts). `warmup`: the run's untimed calls, profiled and timed as well, so counted.
 */
export async function printBreakdown(
  name: string,
  trips: RoundTrips,
  run: () => Promise<Figures>,
  warmup: number,
): Promise<OperationBreakdown> {
  const { result, breakdown } = await profiled(() => trips.measuring(run));
  const operations = result.result.count + warmup;
  console.log(formatBreakdown(`breakdown of ${name} (profiled, untimed)`, breakdown, operations));
  console.log(formatRoundTrips('  its statements', result.statements, operations));
  return { breakdown, operations };
}

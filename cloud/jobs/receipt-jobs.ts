import { checkChains } from '../rules/receipts/chain-check.js';
import { sealFinalEntries } from '../rules/receipts/sealing.js';

/**
 * The receipts' jobs (docs/design.md section 5.3): sealing final entries into their chains every 10 s, and
 * checking the chains' new entries every 5 minutes. `job` makes a periodic job the way background-jobs.ts does.
 */
export function receiptJobs<Job>(
  ctx: Parameters<typeof sealFinalEntries>[0],
  job: (name: string, intervalMs: number, run: () => Promise<unknown>) => Job,
): Job[] {
  return [
    job('journal sealing', 10_000, () => sealFinalEntries(ctx)),
    job('journal chain check', 300_000, () => checkChains(ctx)),
  ];
}

import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How long a wait lasts unless its caller says otherwise: long enough for a busy two-core CI machine, and short
 * of vitest's 20 s test timeout (vitest.config.ts), so that a wait that never ends fails with its own message.
 */
export const WAIT_TIMEOUT_MS = 15_000;
const POLL_MS = 25;

/**
 * Polls until `check` holds, then returns; the assertions follow it. Fails after `timeoutMs` with
 * "timed out waiting for <what>", naming what never came. A check that throws is a failure at once, except
 * while `retryErrors` is set (a process that is restarting answers with errors for a while).
 */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = WAIT_TIMEOUT_MS,
  options: { retryErrors?: boolean } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      if (!options.retryErrors) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out waiting for ${what} after ${timeoutMs} ms${cause}`);
    }
    await sleep(POLL_MS);
  }
}

import { z } from 'zod';

/**
 * The kinds of value the controller's config file holds, each refusing a bad one with a line that says what it
 * accepts (device/config.ts reports them one per line).
 */

export const int = (what: string, min: number, max: number) =>
  z
    .number({ error: `expected ${what}: an integer from ${min} to ${max}` })
    .int({ error: `expected ${what}: an integer from ${min} to ${max}` })
    .min(min, { error: `expected ${what}: an integer from ${min} to ${max}` })
    .max(max, { error: `expected ${what}: an integer from ${min} to ${max}` });

export const text = (what: string) =>
  z.string({ error: `expected ${what}` }).min(1, { error: `expected ${what}` });

export const filePath = (what: string) => text(`${what} (a file or folder path)`);

export const url = (what: string, protocols: readonly string[]) =>
  text(`${what}: a URL starting with ${protocols.join(' or ')}`).refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol.replace(/:$/, '://'));
      } catch {
        return false;
      }
    },
    { error: `expected ${what}: a URL starting with ${protocols.join(' or ')}` },
  );

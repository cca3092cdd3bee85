import { z } from 'zod';
import { brokerUrls } from '../shared/protocol/broker-urls.js';

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

/** One URL, or several comma-separated: the nodes of a broker cluster, tried in turn (docs/design.md section 7.2). */
export const urlList = (what: string, protocols: readonly string[]) =>
  text(`${what}: URLs starting with ${protocols.join(' or ')}, comma-separated`).refine(
    (value) =>
      brokerUrls(value).length > 0 &&
      brokerUrls(value).every((one) => url(what, protocols).safeParse(one).success),
    { error: `expected ${what}: one or more URLs starting with ${protocols.join(' or ')}, comma-separated` },
  );

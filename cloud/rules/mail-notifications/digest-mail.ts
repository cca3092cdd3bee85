import { clockText, dayText } from '../../foundation/web/readable-time.js';
import { displayDomain } from '../companies/domains.js';
import { entryOutcome } from '../journal/entry-outcome.js';
import { outcomeWords } from '../journal/outcome-words.js';
import type { EntryFacts } from '../push-notifications/push-payload.js';
import type { DigestBarrier } from './digest-entries.js';
import type { OpeningMail } from './opening-mail.js';

/**
 * The daily digest (docs/design.md section 10.7): one e-mail of the day before, per barrier where the person
 * chose it, each entry with its time in their zone, the outcome in the journal's words, the actor and the company
 * as the journal shows it, as the e-mail of an opening says them (./opening-mail.ts). A barrier whose list was cut
 * says how many more its journal holds. Never a code or a link that signs in. It carries the one-click
 * unsubscribe of RFC 8058, which stops the digest of every barrier; each barrier's own link, which stops its
 * e-mails, digest included, is in the text.
 */
export interface DigestMailInput {
  /** The local day, 'YYYY-MM-DD'. */
  day: string;
  zone: string;
  barriers: readonly DigestBarrier[];
  baseUrl: string;
  /** The digest's own unsubscribe token (cloud/rules/notification-choices/unsubscribe-token.ts). */
  digestToken: string;
  /** Each barrier's unsubscribe token, by its id. */
  barrierTokens: ReadonlyMap<string, string>;
}

export const DIGEST_UNSUBSCRIBE_PATH = '/notifications/unsubscribe-digest';

export function digestMail(input: DigestMailInput): OpeningMail {
  const day = dayText(new Date(`${input.day}T12:00:00Z`));
  const total = input.barriers.reduce((sum, barrier) => sum + barrier.total, 0);
  const unsubscribe = `${input.baseUrl}${DIGEST_UNSUBSCRIBE_PATH}/${input.digestToken}`;
  return {
    subject: `Your barriers on ${day}: ${total === 1 ? '1 entry' : `${total} entries`}`,
    text: [
      `What happened at your barriers on ${day}, times ${input.zone === 'UTC' ? 'in UTC' : `in ${input.zone}`}.`,
      '',
      ...input.barriers.flatMap((barrier) => barrierLines(barrier, input)),
      "You get this e-mail because you chose one e-mail a day on these barriers' pages.",
      `To stop this daily e-mail, open ${unsubscribe}`,
      "or choose what you are told on each barrier's page.",
    ].join('\n'),
    headers: {
      'List-Unsubscribe': `<${unsubscribe}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

function barrierLines(barrier: DigestBarrier, input: DigestMailInput): string[] {
  const journal = `${input.baseUrl}/barriers/${encodeURIComponent(barrier.deviceId)}/journal`;
  const more = barrier.total - barrier.entries.length;
  const token = input.barrierTokens.get(barrier.deviceId);
  return [
    `${barrier.barrier}: ${barrier.total === 1 ? '1 entry' : `${barrier.total} entries`}`,
    ...barrier.entries.map((entry) => `  ${entryLine(entry, input.zone)}`),
    more > 0 ? `  and ${more} more, see the journal: ${journal}` : `  The journal: ${journal}`,
    ...(token
      ? [`  To stop e-mails of ${barrier.barrier}: ${input.baseUrl}/notifications/unsubscribe/${token}`]
      : []),
    '',
  ];
}

/** "08:01  Opened, by Driver 7 of Demo Cleaning Ltd (domain not confirmed)" */
function entryLine(entry: EntryFacts, zone: string): string {
  const outcome = outcomeWords(entryOutcome(entry.outcome), entry.detail);
  const verified = entry.company_domain !== null && entry.company_key !== null;
  const domain = verified ? displayDomain(entry.company_domain!) : 'domain not confirmed';
  return `${clockText(entry.at, zone)}  ${outcome}, by ${entry.actor} of ${entry.company_name} (${domain})`;
}

import { momentText } from '../../foundation/web/readable-time.js';
import { displayDomain } from '../companies/domains.js';
import { entryOutcome } from '../journal/entry-outcome.js';
import { outcomeWords } from '../journal/outcome-words.js';
import type { EntryFacts } from '../push-notifications/push-payload.js';

/**
 * The e-mail of an opening (docs/design.md section 10.7): what the push says (cloud/rules/push-notifications/
 * push-payload.ts), in a sentence a person reads in their inbox: the barrier, the outcome in the journal's
 * words, the actor and the company as the journal shows it (its domain only once verified), the time in the
 * account's zone, named, and the journal page's address. Never a code or a link that signs in: an inbox is
 * read on many devices. It carries the one-click unsubscribe of RFC 8058 (RFC 2369's List-Unsubscribe with
 * RFC 8058's List-Unsubscribe-Post), whose address is also in the text for a person to open.
 */
export interface OpeningMail {
  subject: string;
  text: string;
  headers: Record<string, string>;
}

export function openingMail(
  entry: EntryFacts,
  input: { zone: string; baseUrl: string; unsubscribeToken: string },
): OpeningMail {
  const outcome = outcomeWords(entryOutcome(entry.outcome), entry.detail);
  const verified = entry.company_domain !== null && entry.company_key !== null;
  const domain = verified ? displayDomain(entry.company_domain!) : 'domain not confirmed';
  const journal = `${input.baseUrl}/barriers/${encodeURIComponent(entry.device_id)}/journal`;
  const unsubscribe = `${input.baseUrl}/notifications/unsubscribe/${input.unsubscribeToken}`;
  return {
    subject: `${entry.barrier}: ${outcome}`,
    text: [
      `${entry.barrier}: ${outcome}`,
      '',
      `By ${entry.actor} of ${entry.company_name} (${domain})`,
      `At ${momentText(entry.at, input.zone)}`,
      '',
      `Every opening of ${entry.barrier} is in its journal: ${journal}`,
      '',
      `You get this e-mail because you asked to be told of ${entry.barrier} by e-mail too.`,
      `To stop these e-mails, open ${unsubscribe}`,
      "or choose what you are told on the barrier's page.",
    ].join('\n'),
    headers: {
      'List-Unsubscribe': `<${unsubscribe}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

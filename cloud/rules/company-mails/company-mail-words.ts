import { momentText } from '../../foundation/web/readable-time.js';
import type { ClaimedCompanyMail } from './company-mail-outbox.js';

/**
 * What each e-mail to a company's members says (docs/design.md section 11.7): what happened, what it means for
 * the company's calls or events, and the one page of the account area to go to next. Plain text, times in the
 * member's zone. Never a code or a link that signs in: an inbox is read on many devices. Null when what the
 * e-mail would tell is over (a failing address changed, retried or removed before it went). A failing endpoint's
 * e-mail names its address only: a company's other endpoints go on as before (section 6.2).
 */
export interface CompanyMailWords {
  subject: string;
  text: string;
}

export function companyMailWords(mail: ClaimedCompanyMail, baseUrl: string): CompanyMailWords | null {
  const area = `${baseUrl}/company/${mail.company_id}`;
  const name = mail.company_name;
  const footer = ['', `You get this e-mail as a member of ${name} on Gatelink; the account area is ${area}`];
  switch (mail.kind) {
    case 'approved':
      return {
        subject: `${name} is approved on Gatelink`,
        text: [
          `An operator approved ${name}: Gatelink answers the company's calls from now on.`,
          '',
          `Next: make the company's API access (a secret, or your domain's key) at ${area}/access,`,
          `then ask a customer for access with a request. Set a callback address at ${area}/callback to receive`,
          'the events of your requests and openings.',
          ...footer,
        ].join('\n'),
      };
    case 'rejected':
      return {
        subject: `${name} was not approved on Gatelink`,
        text: [
          `An operator did not approve ${name}${mail.detail ? `, giving this reason: ${mail.detail}` : '.'}`,
          '',
          `The company's calls are refused until it is approved. Change what the reason names and ask again at`,
          `${area}`,
          ...footer,
        ].join('\n'),
      };
    case 'endpoint_failing': {
      if (!mail.failing_since || !mail.failing_url) return null;
      const since = momentText(mail.failing_since, mail.time_zone);
      return {
        // The host in the subject tells one failing endpoint's e-mail from another's (section 6.2).
        subject: `${name}'s callback address at ${new URL(mail.failing_url).host} is failing`,
        text: [
          `Since ${since}, Gatelink could not deliver an event to ${mail.failing_url}`,
          `for about three days${mail.detail ? `; the last attempt: ${mail.detail}` : ''}.`,
          '',
          'Nothing more is sent there until you change the address or press "Retry now"; the events wait, and',
          `every one is sent, in order, once it works again. The delivery log, with each attempt's answer, is at`,
          `${area}/events`,
          ...footer,
        ].join('\n'),
      };
    }
  }
}

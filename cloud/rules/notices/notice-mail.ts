/**
 * The frame of every notice's e-mail (docs/design.md section 10.7): its lines, then why it came and the one-click
 * unsubscribe of RFC 8058 (RFC 2369's List-Unsubscribe with RFC 8058's List-Unsubscribe-Post), whose address is
 * also in the text for a person to open. Never a code or a link that signs in: an inbox is read on many devices.
 */
export interface NoticeMail {
  subject: string;
  text: string;
  headers: Record<string, string>;
}

/** Who an e-mail goes to, as far as its words need: their zone, the cloud's address, their unsubscribe token. */
export interface MailReader {
  zone: string;
  baseUrl: string;
  unsubscribeToken: string;
}

export function framedMail(
  barrier: string,
  content: { subject: string; lines: readonly string[]; why: string },
  reader: MailReader,
): NoticeMail {
  const unsubscribe = `${reader.baseUrl}/notifications/unsubscribe/${reader.unsubscribeToken}`;
  return {
    subject: content.subject,
    text: [
      ...content.lines,
      '',
      `You get this e-mail because you asked to be told of ${barrier} by e-mail ${content.why}.`,
      `To stop these e-mails, open ${unsubscribe}`,
      "or choose what you are told on the barrier's page.",
    ].join('\n'),
    headers: {
      'List-Unsubscribe': `<${unsubscribe}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

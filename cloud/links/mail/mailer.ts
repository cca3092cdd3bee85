import type { FastifyBaseLogger } from 'fastify';
import { createTransport } from 'nodemailer';
import type { CloudConfig } from '../../foundation/config.js';
import { clockText, zoneWords } from '../../foundation/web/readable-time.js';
import type { CodeMessage } from '../../rules/sign-in-codes/send-code.js';

/**
 * How a one-time sign-in code reaches its e-mail address (docs/design.md section 10.2): over SMTP when
 * `SMTP_URL` is set, else into the cloud's log, which is where the demo's person reads it.
 */
export interface Mailer {
  /** Resolves once the message is handed over; rejects when it could not be. */
  sendCode(message: CodeMessage): Promise<void>;
  /** A short notice to the reader: being added to a company (docs/design.md 11.1), an opening (10.7). */
  sendNotice(message: NoticeMessage): Promise<void>;
}

export interface NoticeMessage {
  to: string;
  subject: string;
  /** Plain text; the mailer adds the service's address at the end. */
  text: string;
  /** Headers beyond the usual, such as List-Unsubscribe on an e-mail of an opening (docs/design.md 10.7). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * The mail server may be slow or gone; a person waits on the page meanwhile, and the HTTP request itself ends
 * after 30 s (cloud/foundation/http/timeouts.ts). Nodemailer's own defaults wait minutes.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 15_000 };

export function smtpMailer(options: { url: string; from: () => string; siteUrl: () => string }): Mailer {
  const transport = createTransport({ url: options.url, ...SMTP_TIMEOUTS });
  return {
    async sendCode(message) {
      await transport.sendMail({
        from: options.from(),
        to: message.to,
        subject: 'Your Gatelink sign-in code',
        text: codeText(message, options.siteUrl()),
      });
    },
    async sendNotice(message) {
      await transport.sendMail({
        from: options.from(),
        to: message.to,
        subject: message.subject,
        text: `${message.text}\n\nGatelink, ${options.siteUrl()}`,
        ...(message.headers ? { headers: { ...message.headers } } : {}),
      });
    },
  };
}

/** No mail server: the code goes to the log at `warn`, the level the demo shows (docs/design.md section 10.2). */
export function logMailer(log: FastifyBaseLogger): Mailer {
  return {
    async sendCode(message) {
      log.warn(
        { email: message.to },
        `No SMTP_URL set: sign-in code for ${message.to} is ${message.code} (valid ${message.validMinutes} minutes)`,
      );
    },
    async sendNotice(message) {
      // The headers' names only: an unsubscribe address is a token that acts without signing in.
      const headers = Object.keys(message.headers ?? {});
      log.info(
        { email: message.to, subject: message.subject, headers },
        'No SMTP_URL set: notice not e-mailed',
      );
    },
  };
}

/** The mailer the configuration asks for. */
export function configuredMailer(config: CloudConfig, log: FastifyBaseLogger, baseUrl: () => string): Mailer {
  if (!config.smtpUrl) return logMailer(log);
  return smtpMailer({
    url: config.smtpUrl,
    from: () => config.mailFrom ?? `Gatelink <no-reply@${new URL(baseUrl()).hostname}>`,
    siteUrl: baseUrl,
  });
}

/**
 * The message says what the code is for and that it works once, and tells someone who did not ask for it
 * that nothing happens unless the code is entered. It never says whether the address has an account. Its end
 * is given in the reader's zone, named (docs/design.md section 10.1).
 */
export function codeText(message: CodeMessage, siteUrl: string): string {
  return [
    `Your Gatelink code is ${message.code}`,
    '',
    'Enter it on the page where you asked for it.',
    `It is valid for ${message.validMinutes} minutes, until ${codeEnd(message)}, and works once.`,
    '',
    'If you did not ask for a code, someone may have typed your address by mistake: ignore this e-mail,',
    'nothing happens without the code.',
    '',
    `Gatelink, ${siteUrl}`,
  ].join('\n');
}

/** "15:12 (Europe/Berlin)": the code ends within the hour, so the time of day says enough. */
function codeEnd(message: CodeMessage): string {
  return `${clockText(message.expiresAt, message.zone)} ${zoneWords(message.zone)}`;
}

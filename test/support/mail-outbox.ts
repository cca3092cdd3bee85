import type { Mailer, NoticeMessage } from '../../cloud/links/mail/mailer.js';
import type { CodeMessage } from '../../cloud/rules/sign-in-codes/send-code.js';

/**
 * A mailer that keeps what the cloud sends instead of sending it: the sign-in codes and the notices (an
 * invitation, a request passed on), oldest first, for a suite to read as a person reads their inbox. The
 * suites that need the SMTP conversation itself use ./mail-server.ts.
 */
export interface MailOutbox {
  readonly mailer: Mailer;
  readonly codes: CodeMessage[];
  readonly notices: NoticeMessage[];
}

export function mailOutbox(): MailOutbox {
  const codes: CodeMessage[] = [];
  const notices: NoticeMessage[] = [];
  return {
    codes,
    notices,
    mailer: {
      async sendCode(message) {
        codes.push(message);
      },
      async sendNotice(message) {
        notices.push(message);
      },
    },
  };
}

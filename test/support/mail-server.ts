import { SMTPServer } from 'smtp-server';
import { freePort } from './ports.js';

/**
 * A real SMTP server on loopback that keeps every message it accepts, for the suites that follow an e-mail
 * from the cloud to the person's mailbox. No TLS and no login: the cloud reaches it at `url` as it would reach
 * any mail server named by SMTP_URL.
 */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The message as it arrived: headers, blank line, body. */
  raw: string;
}

export interface TestMailServer {
  url: string;
  readonly messages: ReceivedMail[];
  /** The newest message to `address`, or undefined. */
  lastTo(address: string): ReceivedMail | undefined;
  stop(): Promise<void>;
}

/** `host`: the address to listen on, loopback unless a suite's cloud runs on another host (test/deployment/). */
export async function startMailServer(host = '127.0.0.1'): Promise<TestMailServer> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        messages.push({
          from: from ? from.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    url: `smtp://${host}:${port}`,
    messages,
    lastTo: (address) => messages.findLast((message) => message.to.includes(address)),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import { SigningKey } from '../shared/crypto/ed25519.js';
import { type Command, optional, required } from './command.js';
import { asciiDomain, writeKeyFile } from './key-file.js';

/**
 * `keygen`: a new Ed25519 key pair for the company's domain (docs/design.md section 11.2). The private key goes
 * to a file only its owner can read; what to publish, and where, is printed, with the fingerprint the service
 * shows so that the company can tell its key at a glance.
 */
export const keygen: Command = {
  name: 'keygen',
  summary: 'make a key pair for your domain and say what to publish',
  usage: `Usage: gatelink-company keygen --domain example.com [--out company-key.json]

Makes an Ed25519 key pair. The private key is written to --out (default company-key.json), readable by you
only; an existing file is never replaced. Prints the key file to publish on your domain, where to publish it,
and the key's fingerprint as Gatelink shows it.`,
  options: { domain: { type: 'string' }, out: { type: 'string' } },
  async run(values, io) {
    const domain = asciiDomain(
      required(values, 'domain', 'the domain your company signs for, such as example.com'),
    );
    const out = optional(values, 'out') ?? 'company-key.json';
    const key = SigningKey.generate();
    writeKeyFile(out, { domain, key });
    io.out(keyPublishingText(domain, out, key));
    return 0;
  },
};

/** What keygen prints: the exact file to publish, its address and the fingerprint. */
export function keyPublishingText(domain: string, out: string, key: SigningKey): string {
  return `Wrote the private key to ${out} (readable by you only). Keep it secret and keep a backup:
anyone holding it can act for ${domain}, and without it your calls stop.

1. Publish this file at https://${domain}/.well-known/service.json
   (served over https with status 200, at most 4 KiB, no redirect to another host):

${serviceJson(key)}
2. Its key's fingerprint, as Gatelink shows it: ${key.publicKey.fingerprint}

3. In your company's area on Gatelink, open "API access" and press "Check my key file",
   then prove you hold the key with: gatelink-company prove --key ${out} --text '<the text shown>'
`;
}

/** The document `/.well-known/service.json` holds (company-access-api.md 5.1). */
export function serviceJson(key: SigningKey): string {
  return `${JSON.stringify({ key: key.publicKey.base64 })}\n`;
}

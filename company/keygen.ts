import { existsSync, writeFileSync } from 'node:fs';
import { SigningKey } from '../shared/crypto/ed25519.js';
import { type Command, optional, required, toolCommand } from './command.js';
import { asciiDomain, UsageError, writeKeyFile } from './key-file.js';
import { printJson } from './printing.js';

/**
 * `keygen`: a new Ed25519 key pair for the company's domain (docs/design.md section 11.2). The private key goes
 * to a file only its owner can read; what to publish, and where, is printed, with the fingerprint the service
 * shows so that the company can tell its key at a glance.
 */
export const keygen: Command = {
  name: 'keygen',
  summary: 'make a key pair for your domain and say what to publish',
  usage: `Usage: gatelink-company keygen --domain example.com [--out company-key.json]
                               [--service-json service.json] [--json]

Makes an Ed25519 key pair. The private key is written to --out (default company-key.json), readable by you
only; an existing file is never replaced. Prints the key file to publish on your domain, where to publish it,
and the key's fingerprint as Gatelink shows it. --service-json also writes that file, to publish as it is
(an existing one is not replaced either). --json prints those facts as one JSON object.`,
  options: {
    domain: { type: 'string' },
    out: { type: 'string' },
    'service-json': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(values, io, env) {
    const domain = asciiDomain(
      required(values, 'domain', 'the domain your company signs for, such as example.com'),
    );
    const out = optional(values, 'out') ?? 'company-key.json';
    const published = optional(values, 'service-json');
    // Refused before anything is written, so that a refusal leaves no key without its file, or the reverse.
    if (published !== undefined) refuseExisting(published, 'it may be the file your domain publishes now');
    const key = SigningKey.generate();
    writeKeyFile(out, { domain, key });
    if (published !== undefined) writeFileSync(published, serviceJson(key), { flag: 'wx', mode: 0o644 });
    if (values.json === true) {
      printJson(io, {
        key_file: out,
        domain,
        public_key: key.publicKey.base64,
        fingerprint: key.publicKey.fingerprint,
        publish_at: serviceJsonUrl(domain),
        service_json: JSON.parse(serviceJson(key)) as unknown,
        ...(published === undefined ? {} : { service_json_file: published }),
      });
    } else {
      io.out(keyPublishingText(domain, out, key, { published, tool: toolCommand(env) }));
    }
    return 0;
  },
};

function refuseExisting(path: string, why: string): void {
  if (existsSync(path)) {
    throw new UsageError(`${path} exists already; ${why}, so it is left as it is. Choose another file.`);
  }
}

function serviceJsonUrl(domain: string): string {
  return `https://${domain}/.well-known/service.json`;
}

/**
 * What keygen prints: the exact file to publish, its address and the fingerprint; `tool` is how to run the
 * tool again (toolCommand).
 */
export function keyPublishingText(
  domain: string,
  out: string,
  key: SigningKey,
  options: { published: string | undefined; tool: string },
): string {
  const { published, tool } = options;
  const written = published === undefined ? '' : `   It is written to ${published}, to publish as it is.\n`;
  return `Wrote the private key to ${out} (readable by you only). Keep it secret and keep a backup:
anyone holding it can act for ${domain}, and without it your calls stop.

1. Publish this file at ${serviceJsonUrl(domain)}
   (served over https with status 200, at most 4 KiB, no redirect to another host):
${written}
${serviceJson(key)}
2. Its key's fingerprint, as Gatelink shows it: ${key.publicKey.fingerprint}

3. In your company's area on Gatelink, open "API access" and press "Check my key file",
   then prove you hold the key with: ${tool} prove --key ${out} --text '<the text shown>'
`;
}

/** The document `/.well-known/service.json` holds (cloud/README.md, "Signature bound to your domain"). */
export function serviceJson(key: SigningKey): string {
  return `${JSON.stringify({ key: key.publicKey.base64 })}\n`;
}

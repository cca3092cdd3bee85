import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { KeyError, SigningKey } from '../shared/crypto/ed25519.js';

/**
 * The company's key file (docs/design.md section 11.2): the private key, in PKCS#8 PEM so that OpenSSL can use it
 * too, with its public half and the domain it signs for. It is written once, readable by its owner only, and
 * never overwritten: losing a key by running keygen twice would stop every call until a rotation is confirmed.
 */
export const KEY_FILE_FORMAT = 'gatelink-company-key/1';

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CompanyKey {
  domain: string;
  key: SigningKey;
}

const keyFileSchema = z.object({
  format: z.literal(KEY_FILE_FORMAT),
  domain: z.string(),
  public_key: z.string(),
  private_key: z.string(),
});

/** The domain in lowercase ASCII (punycode for national characters), as the service compares it. */
export function asciiDomain(input: string): string {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '')).toLowerCase();
  const labels = ascii.split('.');
  const usable =
    labels.length >= 2 &&
    ascii.length <= 253 &&
    labels.every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label)) &&
    /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(labels.at(-1) ?? '');
  if (!usable) throw new UsageError(`"${input}" is not a domain; give one such as example.com`);
  return ascii;
}

/** Writes a new key file with mode 0600; refuses to replace one that exists. */
export function writeKeyFile(path: string, company: CompanyKey): void {
  const text = `${JSON.stringify(
    {
      format: KEY_FILE_FORMAT,
      domain: company.domain,
      public_key: company.key.publicKey.base64,
      private_key: company.key.toPem(),
    },
    null,
    2,
  )}\n`;
  try {
    writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new UsageError(
        `${path} exists already; it may hold the key your domain publishes, so it is left as it is. ` +
          'Choose another file with --out, or move it away first.',
      );
    }
    throw error;
  }
  // The mode given at creation is narrowed by the umask only; set it exactly all the same.
  chmodSync(path, 0o600);
}

export function readKeyFile(path: string): CompanyKey {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'ENOENT'
        ? `no key file at ${path}; make one with keygen, or name yours with --key`
        : `cannot read ${path}: ${(error as Error).message}`,
    );
  }
  let parsed: z.infer<typeof keyFileSchema>;
  try {
    parsed = keyFileSchema.parse(JSON.parse(text));
  } catch {
    throw new UsageError(`${path} is not a key file made by keygen (${KEY_FILE_FORMAT})`);
  }
  let key: SigningKey;
  try {
    key = SigningKey.fromPem(parsed.private_key);
  } catch (error) {
    const why = error instanceof KeyError ? error.message : 'its private key cannot be read';
    throw new UsageError(`${path}: ${why}`);
  }
  if (key.publicKey.base64 !== parsed.public_key) {
    throw new UsageError(`${path}: its public_key is not the public half of its private_key`);
  }
  return { domain: asciiDomain(parsed.domain), key };
}

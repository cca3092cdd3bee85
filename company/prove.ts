import type { SigningKey } from '../shared/crypto/ed25519.js';
import { isKeyProofText, KEY_PROOF_PREFIX, signKeyProof } from '../shared/crypto/key-proof.js';
import { type Command, optional, required } from './command.js';
import { readKeyFile, UsageError } from './key-file.js';
import { printJson } from './printing.js';

/**
 * `prove`: signs the text the company's area shows, proving that the company holds the private half of the key
 * its domain publishes (docs/design.md section 11.2). Only a key proof text is signed (shared/crypto/key-proof.ts),
 * so this command cannot be used to sign an API call.
 */
export const prove: Command = {
  name: 'prove',
  summary: 'sign the text your company area shows, to prove you hold the key',
  usage: `Usage: gatelink-company prove [--key company-key.json] --text 'gatelink-key-proof:v1:...'

Prints the signature (base64) of the text shown on your company's "API access" page. Paste it there.
--json prints {"signature": "<base64>"}.`,
  options: { key: { type: 'string' }, text: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, io) {
    const company = readKeyFile(optional(values, 'key') ?? 'company-key.json');
    const text = required(values, 'text', "the text shown on your company's API access page");
    const signature = proveText(company.key, text);
    if (values.json === true) printJson(io, { signature });
    else io.out(`${signature}\n`);
    return 0;
  },
};

/** The signature of a key proof text; any other text is refused as a usage error. */
export function proveText(key: SigningKey, text: string): string {
  if (!isKeyProofText(text.trim())) {
    throw new UsageError(
      `--text must be the text shown on your API access page, starting with ${KEY_PROOF_PREFIX}; nothing else is signed`,
    );
  }
  return signKeyProof(key, text.trim());
}

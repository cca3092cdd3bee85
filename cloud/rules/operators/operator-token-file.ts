import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The generated operator token's file in the data folder, which gatelink-admin on this machine reads too. */
export const OPERATOR_TOKEN_FILE = 'operator-token';

/** Where the generated operator token lives in `dataDir`. */
export function operatorTokenFile(dataDir: string): string {
  return join(dataDir, OPERATOR_TOKEN_FILE);
}

/**
 * OPERATOR_TOKEN, or one generated at first start into the data folder (docs/design.md section 8). The
 * generated one starts with `glop_`: a command line would read a token beginning with `-` as an option, and
 * the prefix lets secret scanners recognise it (cloud/README.md, "Configuration").
 */
export function loadOperatorToken(
  dataDir: string,
  configured: string | undefined,
): { token: string; file: string | undefined } {
  if (configured) return { token: configured, file: undefined };
  const file = operatorTokenFile(dataDir);
  if (!existsSync(file)) makeOperatorToken(file);
  chmodSync(file, 0o600);
  return { token: readFileSync(file, 'utf8').trim(), file };
}

/** A new token written to `file`, 0600; never over an existing file (the write fails with EEXIST). */
export function makeOperatorToken(file: string): void {
  writeFileSync(file, `glop_${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
}

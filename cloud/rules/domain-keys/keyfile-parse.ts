import { KeyError, strictPublicKeyFromBase64, type VerifyKey } from '../../../shared/crypto/ed25519.js';

/**
 * What a company's key file must hold (docs/design.md section 2, "Key file"; cloud/README.md, "Signature bound to your domain"):
 * `{"key": "<base64 Ed25519 public key>"}`, in UTF-8 JSON, the key strictly checked (no small order, no
 * non-canonical encoding). Fetching it is keyfile-fetch.ts.
 */

export type KeyFileParseResult =
  | { ok: true; key: VerifyKey }
  | { ok: false; reason: 'invalid_json' | 'invalid_key'; message: string };

/** `{"key": "<base64 Ed25519 public key>"}`, strictly checked; `display` names the domain in the message. */
export function parseKeyFile(body: Uint8Array, display: string): KeyFileParseResult {
  const document = parseJson(body);
  if (!document.ok) {
    return {
      ok: false,
      reason: 'invalid_json',
      message: `${display}'s key file is not valid JSON (${document.why})`,
    };
  }
  const value = document.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'invalid_json', message: `${display}'s key file is not a JSON object` };
  }
  const key: unknown = (value as Record<string, unknown>).key;
  if (typeof key !== 'string') {
    return {
      ok: false,
      reason: 'invalid_key',
      message: `${display}'s key file has no "key" string; publish {"key": "<base64 Ed25519 public key>"}`,
    };
  }
  return strictKey(key, display);
}

function parseJson(body: Uint8Array): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) };
  } catch (error) {
    return { ok: false, why: error instanceof SyntaxError ? error.message : 'it is not UTF-8' };
  }
}

function strictKey(key: string, display: string): KeyFileParseResult {
  try {
    return { ok: true, key: strictPublicKeyFromBase64(key) };
  } catch (error) {
    if (!(error instanceof KeyError)) throw error;
    return {
      ok: false,
      reason: 'invalid_key',
      message: `${display}'s key file holds an unusable key: ${error.message}`,
    };
  }
}

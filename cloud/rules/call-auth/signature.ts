import type { IncomingHttpHeaders } from 'node:http';
import { sql } from 'kysely';
import { decodeBase64 } from '../../../shared/crypto/ed25519.js';
import { baseString, SIGNATURE_HEADERS } from '../../../shared/crypto/request-signing.js';
import { ApiError } from '../../../shared/errors.js';
import { KEY_CONFIRMATION_LIMIT_MS, TIMESTAMP_TOLERANCE_SECONDS } from '../../../shared/limits.js';
import type { Company } from '../companies/companies.js';
import { isAsciiDomain } from '../companies/domains.js';
import type { VerifyKeyCache } from '../domain-keys/verify-keys.js';
import { sandboxOpenTo } from '../sandbox/sandbox-world.js';
import type { CallAuthContext } from './call-auth-context.js';

interface SignatureHeaders {
  /** Lowercased, for the lookup. */
  domain: string;
  /** Exactly as sent, for the base string. */
  org: string;
  ts: string;
  nonce: string;
  signature: Uint8Array;
}

/** Reads the four X-Service-* headers: null when none is present, `bad_headers` when some or a bad one is. */
export function readSignatureHeaders(headers: IncomingHttpHeaders): SignatureHeaders | null {
  const values = Object.values(SIGNATURE_HEADERS).map((name) => headers[name]);
  if (values.every((value) => value === undefined)) return null;
  const [org, ts, nonce, sig] = values;
  if (
    typeof org !== 'string' ||
    typeof ts !== 'string' ||
    typeof nonce !== 'string' ||
    typeof sig !== 'string'
  ) {
    throw new ApiError('bad_headers');
  }
  // Non-ASCII arrives as latin-1 bytes; a national domain must come as punycode (xn--).
  const domain = org.toLowerCase();
  if (!isAsciiDomain(domain)) {
    throw new ApiError('bad_headers', {
      message: 'X-Service-Org must be the ASCII domain; write national characters in punycode (xn--...).',
    });
  }
  if (!/^[0-9]{1,12}$/.test(ts))
    throw new ApiError('bad_headers', { message: 'X-Service-Ts must be Unix seconds.' });
  if (!/^[0-9a-fA-F]{32}$/.test(nonce)) {
    throw new ApiError('bad_headers', { message: 'X-Service-Nonce must be 32 hexadecimal characters.' });
  }
  const signature = decodeBase64(sig);
  if (signature?.length !== 64) {
    throw new ApiError('bad_headers', {
      message: 'X-Service-Sig must be the base64 of a 64-byte signature.',
    });
  }
  return { domain, org, ts, nonce, signature };
}

/**
 * Verifies a signed call (docs/design.md section 2) and returns the company with the nonce's single use still
 * being decided: `fresh` rejects with `nonce_reused` for a replay. The nonce is consumed only after the
 * signature verifies, so nobody can burn a company's nonces without its key; the caller decides what may
 * overlap the decision (docs/design.md section 2.1).
 */
export async function authenticateSignature(
  ctx: CallAuthContext,
  signed: SignatureHeaders,
  rawBody: Uint8Array,
  keys: VerifyKeyCache,
  sandbox = false,
): Promise<{ company: Company; fresh: Promise<void> }> {
  const now = ctx.clock.now();
  if (Math.abs(Number(signed.ts) - now.getTime() / 1000) > TIMESTAMP_TOLERANCE_SECONDS) {
    throw new ApiError('stale_timestamp');
  }
  const company = await companyByDomain(ctx, signed.domain);
  if (!company) throw new ApiError('unknown_org');
  const key = signingKey(company, now, sandbox);
  // The string as signed: the header exactly as sent, not our lowercased copy.
  const message = new TextEncoder().encode(baseString(signed.org, signed.ts, signed.nonce, rawBody));
  if (!(await keys.get(key).verifyOffThread(message, signed.signature))) throw new ApiError('bad_signature');
  // The sandbox is open to a company waiting for approval (docs/design.md section 11.9), not to one refused.
  if (sandbox ? !sandboxOpenTo(company.status) : company.status !== 'approved')
    throw new ApiError('org_not_approved');
  const fresh = ctx.nonces.consume(company.id, signed.nonce).then((unused) => {
    if (!unused) throw new ApiError('nonce_reused');
    ctx.companyCache.remember(`domain:${signed.domain}`, company);
  });
  // Settled by the route in every case; this only keeps a decision nobody awaited any more from being reported.
  fresh.catch(() => {});
  return { company, fresh };
}

/**
 * The key that checks a company's calls: the one pinned at approval, while its domain still serves it. In the
 * sandbox, before approval, the key its registrant proved to hold (docs/design.md section 11.1): a developer
 * tries the API with the very key they will sign live calls with.
 */
function signingKey(company: Company, now: Date, sandbox: boolean): string {
  if (!company.key_pub) {
    if (sandbox && company.key_proven) return company.key_proven;
    throw new ApiError('org_not_approved');
  }
  if (company.key_seen_other !== null) throw new ApiError('key_changed');
  if (
    !company.key_confirmed_at ||
    now.getTime() - company.key_confirmed_at.getTime() > KEY_CONFIRMATION_LIMIT_MS
  )
    throw new ApiError('key_unavailable');
  return company.key_pub;
}

/**
 * The company of a domain, remembered once one of its calls passed every check. Several registrations may name
 * one domain while pending (docs/design.md section 11.1); the one an operator let in answers for it, else the
 * oldest, whose calls are refused as not approved.
 */
async function companyByDomain(ctx: CallAuthContext, domain: string): Promise<Company | undefined> {
  return (
    ctx.companyCache.get(`domain:${domain}`) ??
    // Shared by the calls that miss together (company-cache.ts).
    (await ctx.companyCache.shared(`domain-read:${domain}`, () =>
      ctx.db
        .selectFrom('companies')
        .selectAll()
        .where('domain', '=', domain)
        .orderBy(sql`status in ('approved', 'suspended')`, 'desc')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst(),
    ))
  );
}

import { logoPath } from '../logos/logo-store.js';
import { displayDomain } from './domains.js';

/**
 * How a company is shown to a customer (docs/design.md sections 10.3 and 10.5): its name,
 * and its domain only once the domain is verified (its key was fetched from it and pinned), in the spelling of
 * domains.ts. A company without a verified domain is shown by the name it gave, with the note that its domain
 * is not confirmed, and no logo (docs/design.md section 11.3). A company with a verified domain shows its
 * logo, served by the service under the image's hash (docs/design.md section 11.3), or its name's initial until
 * it uploads one.
 */
export interface CompanyDisplay {
  id: number;
  name: string;
  /** The verified domain as a customer reads it, or null when none is verified. */
  verifiedDomain: string | null;
  /** The logo served by the service, or null. */
  logoUrl: string | null;
}

export function companyDisplay(row: {
  id: number;
  name: string;
  domain: string | null;
  key_pub: string | null;
  logo_hash: string | null;
}): CompanyDisplay {
  const verified = row.domain !== null && row.key_pub !== null;
  return {
    id: row.id,
    name: row.name,
    verifiedDomain: verified ? displayDomain(row.domain!) : null,
    logoUrl: verified && row.logo_hash !== null ? logoPath(row.logo_hash) : null,
  };
}

/** The first letter of the name, as the stand-in for a logo: a whole grapheme, so an emoji or accent stays whole. */
export function companyInitial(name: string): string {
  const trimmed = name.trim();
  // Two ASCII characters are always two graphemes (CR LF aside, which no name holds): the first is the
  // initial, without asking ICU, which costs some 10 µs a call, and a journal page has 50 of them.
  if (trimmed.length > 0 && trimmed.charCodeAt(0) < 0x80 && (trimmed.charCodeAt(1) || 0) < 0x80) {
    return trimmed[0]!.toLocaleUpperCase();
  }
  const first = GRAPHEMES.segment(trimmed)[Symbol.iterator]().next();
  return first.done ? '?' : first.value.segment.toLocaleUpperCase();
}

const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

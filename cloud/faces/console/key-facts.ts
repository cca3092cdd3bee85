import type { Company } from '../../rules/companies/companies.js';
import { domainKeyFingerprint } from '../../rules/companies/review.js';

/**
 * What an operator checks of a domain company's key before approving it (docs/design.md section 11.5): the key
 * last fetched from the domain (`key_published`, set by the company's own check in its area), whether the
 * company proved it holds that very key (`key_proven`), and, once approved, the key pinned.
 */
export type KeyProof = 'proved' | 'none' | 'other';

export interface KeyFacts {
  published: string | null;
  publishedAt: Date | null;
  proof: KeyProof;
  pinned: string | null;
}

export function keyFacts(company: Company): KeyFacts {
  let proof: KeyProof = 'none';
  if (company.key_proven !== null) proof = company.key_proven === company.key_published ? 'proved' : 'other';
  return {
    published: domainKeyFingerprint(company.key_published),
    publishedAt: company.key_published_at,
    proof,
    pinned: domainKeyFingerprint(company.key_pub),
  };
}

export const PROOF_WORDS: Record<KeyProof, { text: string; tone: 'ok' | 'bad' | 'wait' }> = {
  proved: { text: 'Holding the key: proved', tone: 'ok' },
  none: { text: 'Holding the key: not proved', tone: 'wait' },
  other: { text: 'Proved another key than the one published', tone: 'bad' },
};

import type { DomainKeysContext } from '../domain-keys/domain-keys-context.js';

/**
 * What registering and reviewing a company stands on beyond the ground: its key is pinned from its domain
 * (cloud/rules/domain-keys/), and whatever keeps a copy of companies (call-auth's cache) is told to forget the
 * one changed; the same two things domain keys stand on.
 */
export type CompaniesContext = DomainKeysContext;

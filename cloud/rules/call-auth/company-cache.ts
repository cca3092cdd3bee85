import type { Clock } from '../../foundation/clock.js';
import type { Company } from '../companies/companies.js';

/** How long a successful authentication is remembered by one instance. */
export const COMPANY_CACHE_MS = 10_000;
/** Beyond this many remembered credentials the oldest are dropped: memory stays bounded whatever the traffic. */
const MAX_ENTRIES = 10_000;

interface Entry {
  company: Company;
  until: number;
}

/**
 * Companies that authenticated recently, by credential (a domain, or an org id with the hash of a secret
 * that matched), so that a company calling often is not looked up in the database on every call.
 *
 * Only successes are remembered: a wrong secret or an unknown domain always reaches the database. What a
 * remembered company may miss is a change made since: this instance forgets a company once a change to it
 * committed (`forget`, called by changeCompany in cloud/rules/company-changes/company-changes.ts, through which every
 * change to a company goes), another instance within COMPANY_CACHE_MS. Openings do not depend on it: `open_attempt`
 * reads the company's status on every call, so a suspension stops openings at once everywhere.
 */
export class CompanyCache {
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();
  readonly #reading = new Map<string, Promise<unknown>>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get(credential: string): Company | undefined {
    const entry = this.#entries.get(credential);
    if (!entry) return undefined;
    if (entry.until > this.#clock.now().getTime()) return entry.company;
    this.#entries.delete(credential);
    return undefined;
  }

  /** Remembers a company for COMPANY_CACHE_MS, or until `validUntil` if that comes first. */
  remember(credential: string, company: Company, validUntil: Date | null = null): void {
    this.#entries.delete(credential);
    if (this.#entries.size >= MAX_ENTRIES) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    const until = this.#clock.now().getTime() + COMPANY_CACHE_MS;
    this.#entries.set(credential, { company, until: Math.min(until, validUntil?.getTime() ?? until) });
  }

  /**
   * `read`, shared by every call that needs the same `key` while it runs. When an entry expires under a burst,
   * every call of the burst misses at once: without this each would send its own read, and under load they
   * would wait on one another for the database's connections (the fleet benchmark saw 276 ms per call). Only
   * a read in flight is shared, never its result afterwards: what is remembered is still `remember`'s alone.
   */
  shared<T>(key: string, read: () => Promise<T>): Promise<T> {
    const pending = this.#reading.get(key) as Promise<T> | undefined;
    if (pending) return pending;
    const started = read().finally(() => this.#reading.delete(key));
    this.#reading.set(key, started);
    return started;
  }

  /** Drops every credential of a company, after a change to it committed (changeCompany alone calls it). */
  forget(companyId: number): void {
    for (const [credential, entry] of this.#entries) {
      if (entry.company.id === companyId) this.#entries.delete(credential);
    }
  }
}

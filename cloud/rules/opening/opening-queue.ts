import { ApiError } from '../../../shared/errors.js';

/**
 * The openings under way on this instance, bounded (docs/design.md section 7.6). Past the point where the
 * instance and its database keep up, every opening more would wait behind the others and all would answer late,
 * then time out; instead, an opening that finds `limit` others under way is answered 503 `overloaded` at once,
 * with `Retry-After`, before anything is written. A company may hold at most half of the places, so that one
 * company's burst leaves room for everyone else's couriers. An opening holds its place until it is answered,
 * except while a person decides (an Allow, a tap on Call the gate): that costs nothing, and may take minutes.
 */
export class OpeningQueue {
  readonly #limit: number;
  readonly #perCompany: number;
  #waiting = 0;
  readonly #byCompany = new Map<number, number>();

  constructor(limit: number) {
    this.#limit = limit;
    this.#perCompany = Math.max(1, Math.floor(limit / 2));
  }

  /** A place for the company's opening; throws `overloaded` when there is none. Leaving twice does nothing. */
  enter(companyId: number): () => void {
    const ofCompany = this.#byCompany.get(companyId) ?? 0;
    if (this.#waiting >= this.#limit || ofCompany >= this.#perCompany) {
      throw new ApiError('overloaded', { headers: { 'retry-after': '1' } });
    }
    this.#waiting++;
    this.#byCompany.set(companyId, ofCompany + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#waiting--;
      const remaining = (this.#byCompany.get(companyId) ?? 1) - 1;
      if (remaining === 0) this.#byCompany.delete(companyId);
      else this.#byCompany.set(companyId, remaining);
    };
  }

  /** Openings waiting now. */
  get waiting(): number {
    return this.#waiting;
  }
}

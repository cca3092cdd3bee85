import { createHash } from 'node:crypto';
import { strictPublicKeyFromBase64, type VerifyKey } from '../../../shared/crypto/ed25519.js';
import { ackSchema } from '../../../shared/protocol/messages.js';
import { positionReportSchema, verifyPositionReport } from '../../../shared/protocol/positions.js';
import { canonicalJson, verifyAck } from '../../../shared/protocol/signing.js';
import type { ReceiptBody, ReceiptJson } from './receipt-body.js';

/**
 * A barrier's journal as a hash chain per owner (docs/design.md section 5.3): each sealed entry's hash is the
 * SHA-256 of the previous one's hash followed by the canonical JSON of its receipt body, the first one's
 * previous hash being the chain's genesis. A verifier outside the cloud computes the same with a few lines
 * (docs/receipts.md).
 */
export const JOURNAL_TAG = 'gatelink/journal/v1';

/** The `prev` of a chain's first entry: names the barrier and the owner it began with. */
export function chainGenesis(deviceId: string, customerId: number): string {
  return sha256Hex(`${JOURNAL_TAG}\n${deviceId}\n${customerId}`);
}

export function entryHash(prev: string, body: ReceiptBody): string {
  return sha256Hex(prev + canonicalJson(body));
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** One link of a chain as the export writes it, and as the cloud's check reads it from the rows. */
export interface ChainLine {
  seq: number;
  prev: string;
  hash: string;
  entry: ReceiptBody;
}

export type ChainVerdict =
  | { intact: true; count: number; head: { seq: number; hash: string } }
  | { intact: false; entry: number | null; seq: number; reason: string };

/**
 * Walks a chain from `start` (its genesis at seq 0, or a point already checked) and says where it first breaks:
 * a missing entry (the seq jumps), a link that does not follow its predecessor, content that does not match
 * its hash, or a signature of the controller that does not verify under its key. `end`, when given, is the
 * head the chain must reach (the cloud's record of it): an entry removed from the end shows there.
 */
export class ChainWalk {
  #seq: number;
  #hash: string;
  #count = 0;
  #broken: Extract<ChainVerdict, { intact: false }> | null = null;
  readonly #keys: (deviceId: string) => VerifyKey | null;

  constructor(start: { seq: number; hash: string }, keys: (deviceId: string) => VerifyKey | null) {
    this.#seq = start.seq;
    this.#hash = start.hash;
    this.#keys = keys;
  }

  /** False once the chain is broken: the rest need not be read. */
  add(line: ChainLine): boolean {
    if (this.#broken) return false;
    const reason = this.#problem(line);
    if (reason) {
      this.#broken = { intact: false, entry: line.entry?.id ?? null, seq: line.seq, reason };
      return false;
    }
    this.#seq = line.seq;
    this.#hash = line.hash;
    this.#count++;
    return true;
  }

  verdict(end?: { seq: number; hash: string }): ChainVerdict {
    if (this.#broken) return this.#broken;
    if (end && (end.seq !== this.#seq || end.hash !== this.#hash)) {
      return {
        intact: false,
        entry: null,
        seq: this.#seq + 1,
        reason: `the chain ends at ${this.#seq}, before its head ${end.seq}: entries are missing at its end`,
      };
    }
    return { intact: true, count: this.#count, head: { seq: this.#seq, hash: this.#hash } };
  }

  #problem(line: ChainLine): string | null {
    if (line.seq !== this.#seq + 1) {
      return `entry ${line.seq} follows entry ${this.#seq}: ${line.seq > this.#seq + 1 ? 'entries are missing' : 'entries are out of order'}`;
    }
    if (line.prev !== this.#hash) return 'it does not follow the entry before it (prev differs)';
    let computed: string;
    try {
      computed = entryHash(line.prev, line.entry);
    } catch {
      return 'its content is not canonical JSON';
    }
    if (computed !== line.hash) return 'its content does not match its hash';
    return signatureProblem(line.entry, this.#keys);
  }
}

/** Whether the acknowledgement and each report verify under the key of the controller they name. */
function signatureProblem(body: ReceiptBody, keys: (deviceId: string) => VerifyKey | null): string | null {
  if (body.ack !== null) {
    const ack = ackSchema.safeParse(body.ack);
    if (!ack.success) return 'its acknowledgement is not one';
    const key = keys(ack.data.device_id);
    if (!key) return `no key for controller ${ack.data.device_id}`;
    if (!verifyAck(key, ack.data)) return "its acknowledgement's signature does not verify";
  }
  for (const item of body.reports as ReceiptJson[]) {
    const report = positionReportSchema.safeParse(item);
    if (!report.success) return 'a position report is not one';
    const key = keys(report.data.device_id);
    if (!key) return `no key for controller ${report.data.device_id}`;
    if (!verifyPositionReport(key, report.data)) return "a position report's signature does not verify";
  }
  return null;
}

/** The keys of a chain's controllers, parsed once each; a key that is not a valid Ed25519 key is none. */
export function keyLookup(keys: Record<string, string>): (deviceId: string) => VerifyKey | null {
  const parsed = new Map<string, VerifyKey | null>();
  return (deviceId) => {
    if (!parsed.has(deviceId)) {
      const text = Object.hasOwn(keys, deviceId) ? keys[deviceId] : undefined;
      let key: VerifyKey | null = null;
      try {
        key = text ? strictPublicKeyFromBase64(text) : null;
      } catch {
        key = null;
      }
      parsed.set(deviceId, key);
    }
    return parsed.get(deviceId) ?? null;
  };
}

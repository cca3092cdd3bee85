import { z } from 'zod';

/**
 * The last millisecond of year 9999. A later time needs ISO 8601's six-digit years, which PGlite refuses to
 * store: a signed ack timed later could never reach the journal, and the controller would send it forever.
 */
export const LAST_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/**
 * No control characters and no unpaired surrogates: the database refuses a NUL and a lone surrogate in JSON,
 * and stores other lone surrogates changed; an escape sequence would reach a customer's page as it came.
 */
export const PRINTABLE_TEXT = /^[^\p{Cc}\p{Cs}]*$/u;
/** Text a controller reports about itself (labels, versions), shown to customers and stored as it came. */
export const reportedText = (max: number) => z.string().max(max).regex(PRINTABLE_TEXT);

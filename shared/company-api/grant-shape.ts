import { z } from 'zod';

/**
 * The shape of an access grant as the company API carries it (docs/design.md section 3.1): when in the week the
 * key opens, from when, until when, and how many times in all. A company proposes one in `request`; the customer
 * grants that or less. Every field is optional, and a field left out sets no limit. Unknown fields are refused,
 * so that a misspelt field never silently widens a grant.
 *
 * Every message names its field by its whole path as the body has it (`shape.windows[0].to` when the shape is
 * the body's `shape`), as the messages of ./calls.ts do, so that 400 `invalid_field` says which field.
 */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Bounds of a shape, which the messages and the description say. */
export const GRANT_SHAPE_LIMITS = { windows: 8, openings: 1000 } as const;

/** A zod path in the body's own notation: `shape.windows[0].to`; `shape` for the shape itself. */
export function fieldName(path: readonly PropertyKey[]): string {
  let name = '';
  for (const part of path) {
    if (typeof part === 'number') name += `[${part}]`;
    else name += name === '' ? String(part) : `.${String(part)}`;
  }
  return name || 'shape';
}

/** A message naming the field at fault, whatever the shape is embedded in. */
const says =
  (words: string) =>
  (issue: { path?: PropertyKey[] | undefined }): string =>
    `${fieldName(issue.path ?? [])} ${words}`;

/** The name of `field` of the object at `path`: `shape.ends_at`, or `ends_at` for a shape on its own. */
const fieldOf = (path: readonly PropertyKey[] | undefined, field: string) =>
  fieldName([...(path ?? []), field]);

/** The message of an object's own issues: an unknown field, named; or no object at all. */
const objectError =
  (what: string, fields: readonly string[]) =>
  (issue: { code?: string | undefined; path?: PropertyKey[] | undefined; keys?: string[] }): string =>
    issue.code === 'unrecognized_keys'
      ? `${(issue.keys ?? []).map((key) => fieldOf(issue.path, key)).join(', ')}: no such field; ${what} has ${fields.join(', ')}`
      : `${fieldName(issue.path ?? [])} must be ${what}, an object of ${fields.join(', ')}`;

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
/** `to` reaches 24:00, the midnight that ends the day; 00:00 ends nothing. */
const HH_MM_TO = /^(?!00:00$)(([01]\d|2[0-3]):[0-5]\d|24:00)$/;

const daysSchema = z
  .array(z.enum(WEEKDAYS, { error: says(`must be one of ${WEEKDAYS.join(', ')}`) }), {
    error: says('must be a list of weekdays, such as ["mon", "tue"]'),
  })
  .min(1, { error: says('must name at least one weekday') })
  .max(WEEKDAYS.length, { error: says('must name each weekday at most once') })
  .refine((days) => new Set(days).size === days.length, {
    error: says('must name each weekday at most once'),
  })
  .meta({
    description: `The weekdays the window starts on: 1..7 of ${WEEKDAYS.join(', ')}, each at most once.`,
    examples: [['mon', 'tue', 'wed', 'thu', 'fri']],
  });

const fromSchema = z
  .string({ error: says('must be a time of day, "HH:MM"') })
  .regex(HH_MM, { error: says('must be a time of day, "HH:MM" from 00:00 to 23:59') })
  .meta({
    description:
      "When the window opens, `HH:MM` from 00:00 to 23:59, wall-clock time in the barrier's time zone.",
    examples: ['08:00'],
  });

const toSchema = z
  .string({ error: says('must be a time of day, "HH:MM"') })
  .regex(HH_MM_TO, {
    error: says(
      'must be a time of day, "HH:MM" from 00:01 to 24:00 (24:00 for the midnight that ends the day)',
    ),
  })
  .meta({
    description:
      "When the window closes, `HH:MM` from 00:01 to 24:00, wall-clock time in the barrier's time zone; the " +
      'window closes as that minute begins. Earlier than `from`: the window crosses midnight and ends on ' +
      'the next day.',
    examples: ['12:00'],
  });

export const grantWindowSchema = z
  .strictObject(
    { days: daysSchema, from: fromSchema, to: toSchema },
    { error: objectError('a window', ['days', 'from', 'to']) },
  )
  .refine((window) => window.from !== window.to, {
    path: ['to'],
    error: says(
      'equals from, a window of zero length: set to later than from, or earlier for one across midnight',
    ),
  })
  .meta({
    description:
      "Hours of the week when the key opens, wall-clock time in the barrier's time zone: on each of `days`, from " +
      '`from` until `to`. A window whose `to` is earlier than its `from` crosses midnight and belongs to the day ' +
      'it starts on: fri 22:00 to 06:00 is Friday night into Saturday morning.',
    examples: [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '12:00' },
      { days: ['fri'], from: '22:00', to: '06:00' },
    ],
  });

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** The instant of a `YYYY-MM-DD HH:MM:SS` UTC timestamp, or null when it is no real calendar time (2026-02-30). */
export function timestampInstant(text: string): Date | null {
  if (!TIMESTAMP.test(text)) return null;
  const iso = `${text.replace(' ', 'T')}Z`;
  const instant = new Date(iso);
  // A round trip refuses what Date would roll over: 30 February, 24:00:00, 13th months.
  return !Number.isNaN(instant.getTime()) && instant.toISOString().slice(0, 19) === iso.slice(0, 19)
    ? instant
    : null;
}

const timestampSchema = (description: string, example: string) =>
  z
    .string({ error: says('must be a time, "YYYY-MM-DD HH:MM:SS" in UTC') })
    .regex(TIMESTAMP, { error: says('must be a time, "YYYY-MM-DD HH:MM:SS" in UTC') })
    .refine((text) => timestampInstant(text) !== null, {
      error: says('must be a real time, "YYYY-MM-DD HH:MM:SS" in UTC'),
    })
    .meta({ description: `${description}, \`YYYY-MM-DD HH:MM:SS\` in UTC.`, examples: [example] });

const SHAPE_FIELDS = ['windows', 'starts_at', 'ends_at', 'openings'] as const;

export const grantShapeSchema = z
  .strictObject(
    {
      windows: z
        .array(grantWindowSchema, { error: says('must be a list of windows') })
        .min(1, { error: says('must hold at least one window; leave it out for any hour') })
        .max(GRANT_SHAPE_LIMITS.windows, {
          error: says(`must hold at most ${GRANT_SHAPE_LIMITS.windows} windows`),
        })
        .optional()
        .meta({
          description: `When in the week the key opens: 1..${GRANT_SHAPE_LIMITS.windows} windows, any of which allows. Left out: at any hour.`,
          examples: [[{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '12:00' }]],
        }),
      starts_at: timestampSchema(
        'The first moment the key opens; left out: from the grant on',
        '2026-12-07 07:00:00',
      ).optional(),
      ends_at: timestampSchema(
        'The moment the key stops opening; left out: until the customer withdraws it',
        '2026-12-19 17:00:00',
      ).optional(),
      openings: z
        .number({ error: says(`must be an integer, 1..${GRANT_SHAPE_LIMITS.openings}`) })
        .int({ error: says(`must be an integer, 1..${GRANT_SHAPE_LIMITS.openings}`) })
        .min(1, { error: says(`must be an integer, 1..${GRANT_SHAPE_LIMITS.openings}`) })
        .max(GRANT_SHAPE_LIMITS.openings, {
          error: says(`must be an integer, 1..${GRANT_SHAPE_LIMITS.openings}`),
        })
        .optional()
        .meta({
          description: `How many openings the key makes in all, 1..${GRANT_SHAPE_LIMITS.openings}. Left out: no count.`,
          examples: [5],
        }),
    },
    { error: objectError('a shape', SHAPE_FIELDS) },
  )
  .refine((shape) => !shape.starts_at || !shape.ends_at || shape.starts_at < shape.ends_at, {
    // The timestamps are of one fixed width, so their order as text is their order in time.
    path: ['ends_at'],
    error: (issue) => {
      const shape = issue.path?.slice(0, -1);
      return `${fieldOf(shape, 'starts_at')} must be before ${fieldOf(shape, 'ends_at')}`;
    },
  })
  .meta({
    description:
      'The shape of the access asked for: hours of the week, a start, an end, a number of openings, in any ' +
      'combination; the customer may grant it or less. Every field is optional, and one left out sets no ' +
      'limit; an unknown field is refused.',
    examples: [
      {
        windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '12:00' }],
        starts_at: '2026-12-07 07:00:00',
        ends_at: '2026-12-19 17:00:00',
        openings: 5,
      },
      { windows: [{ days: ['fri'], from: '22:00', to: '06:00' }] },
    ],
  });

export type GrantWindow = z.infer<typeof grantWindowSchema>;
export type GrantShape = z.infer<typeof grantShapeSchema>;

import { z } from 'zod';
import { LAST_TIME_MS, PRINTABLE_TEXT, reportedText } from './reported-text.js';
import { DEVICE_ID_PATTERN } from './topics.js';
import { updateReportSchema } from './update-report.js';
import { PROTOCOL_VERSION } from './version.js';

/**
 * Payloads exchanged over MQTT (docs/design.md section 7). Times are Unix milliseconds (integers), so that
 * comparing `expires_at` against a clock needs no parsing. Signed messages carry `sig`: base64 of an Ed25519
 * signature over the canonical bytes of the message without `sig` (see ./signing.ts).
 */
export { PROTOCOL_VERSION };

const deviceId = z.string().regex(DEVICE_ID_PATTERN);

export { LAST_TIME_MS, PRINTABLE_TEXT, reportedText };

const millis = z.number().int().nonnegative().max(LAST_TIME_MS);
const base64Sig = z.string().regex(/^[A-Za-z0-9+/]{86}(==)?$/);
/** The local name of an object in the controller's config: a relay channel or a GSM number. */
export const objectId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/);

/**
 * The number of the GSM module at a barrier, which the gsm and phone kinds dial: digits, with an optional
 * leading +. The controller's config and the cloud (docs/design.md section 10.9) read it by this one rule.
 */
export const GATE_NUMBER_PATTERN = /^\+?[0-9]{3,20}$/;
const GATE_NUMBER_WORDS = 'expected a phone number such as +491701234567 (digits, optional leading +)';
export const gateNumberSchema = z
  .string({ error: GATE_NUMBER_WORDS })
  .regex(GATE_NUMBER_PATTERN, { error: GATE_NUMBER_WORDS });

export const commandSchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  id: z.uuid(),
  device_id: deviceId,
  object: objectId,
  number_id: z.number().int().positive(),
  action: z.literal('open'),
  issued_at: millis,
  expires_at: millis,
  sig: base64Sig,
});
export type Command = z.infer<typeof commandSchema>;
export type UnsignedCommand = Omit<Command, 'sig'>;

/**
 * Why a device refused or failed a command. Refusals come from the command checks, failures from the driver.
 * The cloud reports every non-`opened` outcome as 502 `device_error` with this as `detail`.
 */
export const ACK_REASONS = [
  // command checks
  'wrong_device',
  'bad_signature',
  'expired',
  'duplicate',
  // issued before this run of the controller could trust its clock: an earlier run may have executed it
  'stale',
  'clock_unsynced',
  'unknown_object',
  'busy',
  // driver failures
  'relay_fault',
  'no_carrier',
  'no_answer',
  'no_network',
  'modem_error',
] as const;
export type AckReason = (typeof ACK_REASONS)[number];

/** What a phone's call log showed of an opening's call (the acknowledgement's `call`, below). */
export const PHONE_CALLS = ['placed', 'unanswered', 'answered'] as const;
export type PhoneCall = (typeof PHONE_CALLS)[number];

export const ackSchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  command_id: z.uuid(),
  device_id: deviceId,
  outcome: z.enum(['opened', 'refused', 'failed']),
  reason: z.enum(ACK_REASONS).optional(),
  received_at: millis,
  finished_at: millis,
  /**
   * The command whose pulse this one joined: it arrived while that pulse was under way on its object, and shares
   * its outcome (docs/design.md section 7). Absent for a command that started its own. A new optional field,
   * so `v` stays 1 (section 8.2): the cloud is updated before its controllers.
   */
  pulse: z.uuid().optional(),
  /**
   * For an object opened by a phone call from an Android phone (docs/design.md section 12.6), what the phone's
   * call log showed of the call: `placed` (dialled, its end not seen), `unanswered` (it ended without being
   * answered: the module rejected it, which is how most open, or it was busy or not picked up; the log cannot
   * tell these apart), `answered` (the module picked up). Only with `opened`; covered by the signature like every
   * field. A new optional field, so `v` stays 1 (section 8.2): the cloud is updated before its controllers.
   */
  call: z.enum(PHONE_CALLS).optional(),
  sig: base64Sig,
});
export type Ack = z.infer<typeof ackSchema>;
export type UnsignedAck = Omit<Ack, 'sig'>;

export const deviceObjectSchema = z.strictObject({
  id: objectId,
  label: reportedText(64).min(1),
  /**
   * `phone`: an Android phone running the controller dials the gate from its own SIM (docs/design.md section
   * 12.6). A new value of the enum, so `v` stays 1 (section 8.2): the cloud is updated before
   * its controllers.
   */
  kind: z.enum(['relay', 'gsm', 'simulated', 'phone']),
  /** Set when the object has a position sensor (docs/design.md section 7.5): its reports follow on `ack`. */
  sensor: z.boolean().optional(),
  /**
   * On a `phone` object, the number the phone dials: while the phone's controller is offline, the customer can
   * be asked to call it themselves (docs/design.md section 10.9). A new optional field, so `v` stays 1.
   */
  gate_number: gateNumberSchema.optional(),
});
export type DeviceObject = z.infer<typeof deviceObjectSchema>;

/** Retained on `.../state`. The will message carries `online: false`. */
export const stateSchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  device_id: deviceId,
  online: z.boolean(),
  at: millis,
  version: reportedText(32).optional(),
  objects: z.array(deviceObjectSchema).max(32).optional(),
  /** `process.arch` of the controller, which chooses the release it is given (docs/design.md section 12.4). */
  arch: reportedText(16).optional(),
  /** The last update's progress, until the next update replaces it. */
  update: updateReportSchema.optional(),
});
export type DeviceState = z.infer<typeof stateSchema>;

export const phoneBatterySchema = z.strictObject({
  /** Charge, 0 to 100. */
  percentage: z.number().int().min(0).max(100),
  /** On a charger (AC, USB, dock or wireless). */
  plugged: z.boolean(),
  /** Degrees Celsius, when Android reports it. */
  temperature: z.number().min(-50).max(150).optional(),
});
export type PhoneBattery = z.infer<typeof phoneBatterySchema>;

export const phoneNetworkSchema = z.strictObject({
  /** Android's SIM state: ready, absent, pin_required, puk_required, network_locked, unknown, or a number. */
  sim: reportedText(16),
  /** The operator the phone is registered with; absent when it is registered with none. */
  operator: reportedText(64).optional(),
  /** The radio technology: lte, nr, umts, edge, gprs, unknown, ... */
  type: reportedText(16),
});
export type PhoneNetwork = z.infer<typeof phoneNetworkSchema>;

export const telemetrySchema = z.strictObject({
  v: z.literal(PROTOCOL_VERSION),
  device_id: deviceId,
  at: millis,
  uptime_s: z.number().int().nonnegative(),
  version: reportedText(32),
  /** GSM signal quality as reported by AT+CSQ (0..31), null when there is no modem or it is unknown. */
  signal: z.number().int().min(0).max(31).nullable(),
  clock_synced: z.boolean(),
  outbox: z.number().int().nonnegative(),
  /**
   * The phone's battery, sent only by a controller with phone objects (docs/design.md section 12.6): a phone
   * left on a windowsill unplugged stops opening when it runs flat. New optional fields, so `v` stays 1
   * (section 8.2): the cloud is updated before its controllers.
   */
  battery: phoneBatterySchema.optional(),
  /** The phone's mobile network as Android reports it, with phone objects only (section 12.6). */
  network: phoneNetworkSchema.optional(),
});
export type Telemetry = z.infer<typeof telemetrySchema>;

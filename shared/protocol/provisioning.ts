import { z } from 'zod';
import { deviceObjectSchema, reportedText } from './messages.js';
import { DEVICE_ID_PATTERN } from './topics.js';

/**
 * `POST {cloud}/api/device/provision` (docs/design.md section 9): the controller sends its one-time code,
 * the public half of the key it generated and its objects; the cloud answers with everything the
 * controller needs to connect. Errors use the common error body (`provisioning_code_invalid`, `invalid_field`).
 */
const base64Key = z.string().regex(/^[A-Za-z0-9+/]{43}=?$/);

export const provisionRequestSchema = z.strictObject({
  code: z.string().min(1).max(64),
  public_key: base64Key,
  objects: z.array(deviceObjectSchema).min(1).max(32),
  version: reportedText(32),
});
export type ProvisionRequest = z.infer<typeof provisionRequestSchema>;

export const provisionResponseSchema = z.strictObject({
  device_id: z.string().regex(DEVICE_ID_PATTERN),
  mqtt: z.strictObject({ url: z.string(), username: z.string(), password: z.string() }),
  topic_prefix: z.string(),
  /** The cloud's command public key (base64, 32 bytes): the controller pins it. */
  command_key: base64Key,
  /**
   * The operator's release public key (base64, 32 bytes), which the controller pins: it takes only releases
   * signed by it (docs/design.md section 12.4). Absent when the cloud has none set; the controller then
   * refuses every update until provisioned again.
   */
  release_key: base64Key.optional(),
  /** The code the customer pairs the controller with; absent when it is theirs already (`paired`). */
  pairing_code: z.string().optional(),
  pairing_expires_at: z.string().optional(),
  /**
   * True when the provisioning code was a customer's own, from their set-up of a phone controller
   * (docs/design.md section 9.3): the controller belongs to their account at once, with no pairing code.
   */
  paired: z.literal(true).optional(),
  numbers: z.array(z.strictObject({ id: z.string(), number_id: z.number().int(), label: z.string() })),
});
export type ProvisionResponse = z.infer<typeof provisionResponseSchema>;

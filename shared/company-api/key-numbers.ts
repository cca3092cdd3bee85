import { z } from 'zod';

/**
 * One object a key may open, as `status` and the `request.issued` event name it. `phone_call` marks a gate that
 * opens on a call from the customer's own phone (docs/design.md section 12.6): for it, an `open` answered
 * `opened` means the phone placed the call, which is how such a gate opens, not that anyone saw it move, or,
 * while the phone is offline, that the customer tapped "Call the gate" (section 10.9).
 */
export const keyNumberSchema = z.object({
  number_id: z.number().int().meta({ description: 'The object, for `open`.' }),
  label: z.string().meta({ description: "The customer's name for it." }),
  phone_call: z
    .literal(true)
    .optional()
    .meta({
      description:
        "Present when the gate opens on a call from the customer's own phone: `open` answers `opened` once " +
        'the phone placed the call (the gate opens on it), not when anyone saw the gate move. While the phone ' +
        'is offline, the customer may be asked to call the gate themselves: `open` then waits up to 60 s and ' +
        'answers `opened` once they tapped "Call the gate".',
    }),
});
export type KeyNumber = z.infer<typeof keyNumberSchema>;

/** An object as the cloud stores it, named for a company. */
export function keyNumber(object: { id: number; label: string; kind: string }): KeyNumber {
  return {
    number_id: object.id,
    label: object.label,
    ...(object.kind === 'phone' ? { phone_call: true as const } : {}),
  };
}

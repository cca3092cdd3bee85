import { z } from 'zod';
import { MAX_ID } from '../limits.js';
import { grantShapeSchema } from './grant-shape.js';

/**
 * The sandbox (docs/design.md section 11.9; cloud/README.md, "The sandbox"): every call with `"sandbox": true`
 * in its body (signed as any body is) reaches only the company's sandbox, its simulated customer and the barrier
 * the cloud runs for it, and every answer of it says `"sandbox": true`. `a=sandbox` is how a developer moves that
 * customer and barrier: grant a request, withdraw a key, choose what the next openings come to.
 */

/** What the sandbox barrier's next openings come to, until chosen otherwise. */
export const SANDBOX_OUTCOMES = ['opened', 'offline', 'busy', 'gate_not_moved'] as const;
export type SandboxOutcomeName = (typeof SANDBOX_OUTCOMES)[number];

/** The body field that takes a call to the sandbox; it is part of the signed body, so it cannot be added on the way. */
export const sandboxFlagSchema = z
  .literal(true, { error: 'sandbox must be true, or left out for the live service' })
  .optional()
  .meta({
    description:
      'true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier ' +
      'the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the ' +
      'sandbox secret (`glsb_`) goes with it.',
    examples: [true],
  });

/** What every answer of the sandbox carries, so that it is never taken for a live one. */
export const sandboxMarkSchema = z
  .literal(true)
  .optional()
  .meta({ description: 'Present, and true, on every answer of your sandbox; never on a live one.' });

const codeSchema = z
  .string({ error: 'code must be the request code, a string' })
  .min(1, 'code must be the 12-character request code')
  .max(64, 'code must be the 12-character request code')
  .meta({ description: 'The code `request` answered in the sandbox.', examples: ['7KQ2M9XG4TPW'] });

export const sandboxBodySchema = z
  .discriminatedUnion(
    'do',
    [
      z.looseObject({
        sandbox: sandboxFlagSchema,
        do: z.literal('grant'),
        code: codeSchema,
        shape: grantShapeSchema.optional().meta({
          description: 'The access the simulated customer grants; left out: what the request asked for.',
        }),
      }),
      z.looseObject({
        sandbox: sandboxFlagSchema,
        do: z.literal('withdraw'),
        key_ref: z
          .number({ error: 'key_ref must be an integer' })
          .int('key_ref must be an integer')
          .positive()
          .max(MAX_ID, 'key_ref is out of range')
          .meta({ description: 'The key to withdraw: `key_ref` of `status`.', examples: [311] }),
      }),
      z.looseObject({
        sandbox: sandboxFlagSchema,
        do: z.literal('outcome'),
        outcome: z
          .enum(SANDBOX_OUTCOMES, { error: `outcome must be one of ${SANDBOX_OUTCOMES.join(', ')}` })
          .meta({
            description:
              'What the barrier does with the next openings: `opened` (the gate opens, then closes), `offline` ' +
              '(503 device_offline), `busy` (the controller refuses: 502 device_error), `gate_not_moved` (the ' +
              'relay fires and the gate never moves: `open.gate_not_moved` follows).',
            examples: ['gate_not_moved'],
          }),
      }),
    ],
    { error: 'do must be one of grant, withdraw, outcome' },
  )
  .meta({
    description:
      'Move your sandbox\'s simulated customer and barrier (only with `"sandbox": true`): `grant` claims and ' +
      'grants a request as a customer would, `withdraw` withdraws a key, `outcome` sets what the next openings ' +
      'come to. Each makes the events a real move makes.',
    examples: [
      { sandbox: true, do: 'grant', code: '7KQ2M9XG4TPW' },
      { sandbox: true, do: 'withdraw', key_ref: 311 },
      { sandbox: true, do: 'outcome', outcome: 'gate_not_moved' },
    ],
  });

export type SandboxCall = z.infer<typeof sandboxBodySchema>;
export type SandboxBody = z.input<typeof sandboxBodySchema>;

export const sandboxAnswerSchema = z
  .object({
    sandbox: z.literal(true).meta({ description: "Always: a move is the sandbox's." }),
    code: z.string().optional().meta({ description: 'grant: the request granted.' }),
    key_ref: z.number().int().optional().meta({ description: 'grant and withdraw: the key.' }),
    withdrawn: z.literal(true).optional().meta({ description: 'withdraw: the key is withdrawn.' }),
    outcome: z
      .enum(SANDBOX_OUTCOMES)
      .optional()
      .meta({ description: 'outcome: what the next openings come to.' }),
  })
  .meta({
    description: 'What the move left, as `status` will read it.',
    examples: [
      { sandbox: true, code: '7KQ2M9XG4TPW', key_ref: 311 },
      { sandbox: true, key_ref: 311, withdrawn: true },
      { sandbox: true, outcome: 'gate_not_moved' },
    ],
  });
export type SandboxAnswerBody = z.infer<typeof sandboxAnswerSchema>;

import type { z } from 'zod';
import { errorAnswerSchema } from '../../shared/company-api/calls.js';
import { GatelinkError, type GatelinkErrorCode } from './gatelink-error.js';

/**
 * Reading the cloud's answers with the shared schemas (shared/company-api/calls.ts): a 200 that does not match
 * is an error that says so, never a half-filled object; fields added later (cloud/README.md: version 1 only
 * grows) pass, and are dropped from the typed result.
 */

/** One answer as it came: its status, its body as JSON when it was JSON, and the headers the client reads. */
export interface Answer {
  status: number;
  json: unknown;
  requestId: string | undefined;
  retryAfterMs: number | undefined;
}

export interface CallFacts {
  attempts: number;
  idempotencyKey: string | undefined;
}

/** A 200's body as the schema types it. */
export function readSuccess<S extends z.ZodType>(schema: S, answer: Answer, facts: CallFacts): z.infer<S> {
  const parsed = schema.safeParse(answer.json);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues[0]?.path.join('.') || 'the body';
  throw new GatelinkError({
    code: 'unexpected_answer',
    status: answer.status,
    message: `The cloud answered ${answer.status} with a body this client does not understand (${where}).`,
    requestId: answer.requestId,
    ...facts,
  });
}

/** The company API's error body as a GatelinkError; anything else (a proxy's page) as `unexpected_answer`. */
export function answerError(answer: Answer, facts: CallFacts): GatelinkError {
  const retryAfterSeconds =
    answer.retryAfterMs === undefined ? undefined : Math.ceil(answer.retryAfterMs / 1000);
  const common = { status: answer.status, requestId: answer.requestId, retryAfterSeconds, ...facts };
  const parsed = errorAnswerSchema.safeParse(answer.json);
  if (!parsed.success) {
    return new GatelinkError({
      code: 'unexpected_answer',
      message: `The cloud answered ${answer.status} without a company API error body.`,
      ...common,
    });
  }
  const { error, message, field, detail } = parsed.data;
  return new GatelinkError({
    // A code newer than this client's table is passed on as the cloud sent it (docs/design.md section 11.6).
    code: error as GatelinkErrorCode,
    message,
    ...(field === undefined ? {} : { field }),
    ...(detail === undefined ? {} : { detail }),
    ...common,
  });
}

/** The company API error code of an answer, when its body is one. */
export function errorCodeOf(answer: Answer): string | undefined {
  const parsed = errorAnswerSchema.safeParse(answer.json);
  return parsed.success ? parsed.data.error : undefined;
}

/**
 * The company client, `import … from 'gatelink/client'` (cloud/README.md, "The TypeScript client";
 * docs/design.md section 11.6). It imports shared/ and Node's built-ins only, never cloud/.
 */
export type {
  OpenAnswer,
  OpenBody,
  RequestAnswer,
  RequestBody,
  StatusAnswer,
} from '../../shared/company-api/calls.js';
export type { ListenMessage, TriggerAnswer } from '../../shared/company-api/event-calls.js';
export type { SandboxAnswerBody, SandboxBody } from '../../shared/company-api/sandbox-calls.js';
export { SigningKey, VerifyKey } from '../../shared/crypto/ed25519.js';
export type { ErrorCode } from '../../shared/errors.js';
export { type CompanyKey, readKeyFile } from '../key-file.js';
export type { ClientAuth, SecretAuth, SignatureAuth } from './call-auth.js';
export type { ListenedEvent } from './event-stream.js';
export {
  type CallOptions,
  GatelinkClient,
  type GatelinkClientOptions,
  type IssuedStatus,
  type WaitOptions,
} from './gatelink-client.js';
export {
  CLIENT_ERROR_CODES,
  type ClientErrorCode,
  GatelinkError,
  type GatelinkErrorCode,
  isGatelinkError,
} from './gatelink-error.js';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  type DeliveredEvent,
  type EventData,
  type EventKind,
  isEventOf,
  isKnownEvent,
  type UnknownWebhookEvent,
  type VerifyWebhookInput,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookFailure,
  type WebhookHeaders,
  WebhookVerificationError,
} from './webhook-verification.js';

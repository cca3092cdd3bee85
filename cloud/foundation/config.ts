import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import { brokerUrls } from '../../shared/protocol/broker-urls.js';
import { TOPIC_PREFIX_PATTERN } from '../../shared/protocol/topics.js';

/**
 * The cloud's whole configuration (docs/design.md section 8): read from the environment once at start,
 * validated here, frozen, and passed in explicitly from then on.
 */
const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value?.trim() ? value.trim() : undefined));

/** One URL, or several comma-separated (the nodes of a broker cluster, docs/design.md section 7.2). */
const urlList = (protocol: RegExp) =>
  optionalText.pipe(
    z
      .string()
      .refine((value) => brokerUrls(value).every((url) => z.url({ protocol }).safeParse(url).success))
      .optional(),
  );

/** `gate@example.com` or `Gatelink <gate@example.com>`: one address, on one line. */
const MAIL_FROM_PATTERN = /^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;

const envSchema = z.object({
  PORT: port(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  BASE_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  DATABASE_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  GATELINK_DATA_DIR: z.string().min(1).default('./.data'),
  MQTT_URL: urlList(/^mqtts?$/),
  MQTT_BROKER: z.enum(['mosquitto', 'rabbitmq']).default('mosquitto'),
  RABBITMQ_API_URL: urlList(/^https?$/),
  MQTT_PORT: port(1884),
  MQTT_TLS_PORT: z.preprocess(
    (value) => (typeof value === 'string' && value.trim() === '' ? undefined : value),
    z.coerce.number().int().min(0).max(65535).optional(),
  ),
  MQTT_TLS_CERT_FILE: optionalText,
  MQTT_TLS_KEY_FILE: optionalText,
  MQTT_PLAIN_HOST: optionalText,
  MQTT_TLS_HOST: optionalText,
  MQTT_CA_FILE: optionalText,
  MQTT_PUBLIC_URL: urlList(/^mqtts?$/),
  MQTT_TOPIC_PREFIX: z.string().regex(TOPIC_PREFIX_PATTERN).default('gatelink'),
  MQTT_CLIENT_ID: optionalText.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/)
      .optional(),
  ),
  OPERATOR_TOKEN: optionalText.pipe(z.string().min(24).optional()),
  SIGNING_KEY_FILE: optionalText,
  VAPID_KEY_FILE: optionalText,
  VAPID_SUBJECT: optionalText.pipe(z.string().max(320).refine(isVapidSubject).optional()),
  RELEASE_PUBLIC_KEY: optionalText.pipe(z.string().refine(isReleaseKey).optional()),
  OPEN_RATE_LIMIT: z.coerce.number().int().min(1).max(10_000).default(10),
  OPEN_QUEUE_LIMIT: z.coerce.number().int().min(1).max(10_000).default(32),
  SMTP_URL: optionalText.pipe(z.url({ protocol: /^smtps?$/ }).optional()),
  MAIL_FROM: optionalText.pipe(z.string().max(320).regex(MAIL_FROM_PATTERN).optional()),
  GATELINK_DEV_KEYFILE_URL: optionalText.pipe(
    z
      .string()
      .refine((value) => value.includes('{domain}'), 'must contain {domain}')
      .pipe(z.url({ protocol: /^https?$/ }))
      .optional(),
  ),
  GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: z.enum(['0', '1']).optional(),
  GATELINK_ALLOW_EMBEDDED_DATABASE: z.enum(['0', '1']).optional(),
  TRUST_PROXY: optionalText.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9.:/]+(,\s*[A-Za-z0-9.:/]+)*$/)
      .optional(),
  ),
  NODE_ENV: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** A strictly checked Ed25519 public key in standard base64 (no small-order or non-canonical point). */
function isReleaseKey(text: string): boolean {
  try {
    strictPublicKeyFromBase64(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Who runs the push sender, as RFC 8292 asks: a `mailto:` address or an `https:` page the push services can
 * reach the operator at (docs/design.md section 10.6).
 */
function isVapidSubject(text: string): boolean {
  if (/\s/.test(text)) return false;
  if (text.startsWith('mailto:')) return /^mailto:[^@\s]+@[^@\s]+$/.test(text);
  return z.url({ protocol: /^https$/ }).safeParse(text).success;
}

/** What each variable accepts, for the one-line message when it is wrong. */
const ACCEPTS: Record<string, string> = {
  PORT: 'a port number 0..65535',
  HOST: 'an address to listen on, such as 0.0.0.0',
  BASE_URL: 'an http(s) URL such as https://gate.example.com',
  DATABASE_URL: 'a postgres:// URL, or leave it unset for the embedded database',
  GATELINK_DATA_DIR: 'a folder path',
  MQTT_URL:
    'an mqtt:// or mqtts:// URL of an external broker (several, comma-separated, for a cluster), or leave it unset for the embedded one',
  MQTT_BROKER: 'mosquitto or rabbitmq: the kind of broker at MQTT_URL',
  RABBITMQ_API_URL: "the http(s):// URLs of the RabbitMQ nodes' management API, comma-separated",
  MQTT_PORT: 'a port number 0..65535',
  MQTT_TLS_PORT: "a port number 0..65535 for the embedded broker's TLS listener (0: one the system chooses)",
  MQTT_TLS_CERT_FILE: "a path to the PEM certificate chain of the embedded broker's TLS listener",
  MQTT_TLS_KEY_FILE: 'a path to the PEM private key of that certificate',
  MQTT_PLAIN_HOST: "an address for the embedded broker's plain listener, such as 127.0.0.1",
  MQTT_TLS_HOST: "an address for the embedded broker's TLS listener, such as 0.0.0.0",
  MQTT_CA_FILE: "a path to the PEM certificate of the CA that signed the external broker's certificate",
  MQTT_PUBLIC_URL: 'the mqtt:// or mqtts:// URL devices use to reach the broker (several, comma-separated)',
  MQTT_TOPIC_PREFIX: 'topic levels of letters, digits, _ and -, separated by /',
  MQTT_CLIENT_ID: '1..64 letters, digits, _, . and -, one per cloud instance',
  OPERATOR_TOKEN: 'at least 24 characters, or leave it unset to generate one',
  SIGNING_KEY_FILE: 'a path to an Ed25519 private key in PEM',
  VAPID_KEY_FILE: 'a path to the P-256 private key of Web Push (VAPID) in PEM',
  VAPID_SUBJECT: 'a mailto: address or an https:// URL where push services can reach the operator',
  RELEASE_PUBLIC_KEY:
    'the base64 Ed25519 public key of the release key (gatelink-admin release keygen), or leave it unset',
  OPEN_RATE_LIMIT: 'openings per key per minute, 1..10000',
  OPEN_QUEUE_LIMIT: 'openings one instance lets be under way before answering overloaded, 1..10000',
  SMTP_URL:
    'an smtp:// or smtps:// URL of the mail server, or leave it unset to write sign-in codes to the log',
  MAIL_FROM: 'one sender address, such as Gatelink <gate@example.com>',
  GATELINK_DEV_KEYFILE_URL: 'an http(s) URL template containing {domain} (tests only)',
  GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '0 or 1 (tests only)',
  GATELINK_ALLOW_EMBEDDED_DATABASE: '0 or 1: 1 runs the embedded database in production knowingly',
  LOG_LEVEL: 'one of fatal, error, warn, info, debug, trace, silent',
  TRUST_PROXY:
    'the reverse proxies in front, comma-separated addresses or CIDRs (or loopback), or leave it unset',
};

export interface CloudConfig {
  readonly port: number;
  readonly host: string;
  /** Unset: http://localhost:<actual port>, settled once the server listens. */
  readonly baseUrl: string | undefined;
  readonly database: { readonly url: string } | { readonly dataDir: string } | { readonly memory: true };
  readonly dataDir: string;
  readonly mqtt:
    | {
        readonly kind: 'embedded';
        /** The plain listener's port. */
        readonly port: number;
        readonly publicUrl: string | undefined;
        /** The TLS listener for devices (cloud/README.md, "TLS for controllers"); undefined: none. */
        readonly tls: EmbeddedTls | undefined;
        /** Where the plain listener listens; undefined: HOST. With TLS on it is 127.0.0.1 unless MQTT_PLAIN_HOST. */
        readonly plainHost: string | undefined;
      }
    | {
        readonly kind: 'external';
        readonly url: string;
        readonly publicUrl: string | undefined;
        /** The CA that signed an mqtts:// broker's certificate (MQTT_CA_FILE); undefined: the system's. */
        readonly caFile: string | undefined;
        /** This instance's session on the broker; undefined: a new one at every start. */
        readonly clientId: string | undefined;
        /** Who keeps device accounts: Mosquitto's dynamic security, or a RabbitMQ cluster's management API. */
        readonly accounts:
          | { readonly kind: 'mosquitto' }
          | { readonly kind: 'rabbitmq'; readonly apiUrls: readonly string[] };
      };
  readonly topicPrefix: string;
  readonly operatorToken: string | undefined;
  /**
   * Base64 of the release key's public half (docs/design.md section 12.4.2): given to controllers at
   * provisioning, and the key every uploaded release must be signed with; unset, uploads are refused.
   */
  readonly releasePublicKey: string | undefined;
  readonly serviceKeyFile: string;
  /** The VAPID key that signs Web Push requests (docs/design.md section 10.6); instances share it. */
  readonly vapidKeyFile: string;
  /** The VAPID subject; unset: derived from the base URL (cloud/rules/vapid-key/vapid-subject.ts). */
  readonly vapidSubject: string | undefined;
  readonly openRateLimit: number;
  /** Openings under way past which an instance answers `overloaded` (docs/design.md section 7.6). */
  readonly openQueueLimit: number;
  /** Where sign-in codes are sent (docs/design.md section 10.2); unset: they are written to the log. */
  readonly smtpUrl: string | undefined;
  /** The sender of those e-mails; unset: `Gatelink <no-reply@<host of the base URL>>`. */
  readonly mailFrom: string | undefined;
  readonly devKeyfileUrl: string | undefined;
  readonly allowPrivateCallbacks: boolean;
  /** GATELINK_ALLOW_EMBEDDED_DATABASE=1: production on PGlite, chosen knowingly (foundation/production-refusals.ts). */
  readonly allowEmbeddedDatabase: boolean;
  readonly production: boolean;
  readonly logLevel: string;
  /**
   * The reverse proxies whose X-Forwarded-For is believed; unset: none, and a client is its socket's address.
   * Per-address limits (docs/design.md section 10.1) count the address this yields.
   */
  readonly trustProxy: string | undefined;
}

/** The embedded broker's TLS listener: a port (0: chosen by the system) and the PEM files, re-read when they change. */
export interface EmbeddedTls {
  readonly port: number;
  /**
   * Where it listens: MQTT_TLS_HOST, else every address. Not HOST: behind a reverse proxy HTTP listens on
   * loopback, while the TLS listener is the one devices across the network reach (docs/design.md section 7.4).
   */
  readonly host: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** What MQTT_TLS_PORT is when the certificate and key are set and it is not. */
export const DEFAULT_MQTT_TLS_PORT = 8883;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads the configuration from an environment; throws ConfigError with one line per bad value. What production
 * refuses beyond a bad value is foundation/production-refusals.ts, checked before the cloud starts.
 */
export function loadCloudConfig(env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      return `${name}=${JSON.stringify(env[name] ?? '')} is not valid: use ${ACCEPTS[name] ?? issue.message}`;
    });
    throw new ConfigError(lines.join('\n'));
  }
  const v = parsed.data;
  const production = v.NODE_ENV === 'production';
  if (v.MQTT_URL && v.MQTT_BROKER === 'rabbitmq' && !v.RABBITMQ_API_URL) {
    throw new ConfigError(
      "MQTT_BROKER=rabbitmq needs RABBITMQ_API_URL: the nodes' management API, such as http://broker1:15672",
    );
  }
  const tlsRefusal = mqttTlsRefusal(v);
  if (tlsRefusal) throw new ConfigError(tlsRefusal);
  const dataDir = resolve(v.GATELINK_DATA_DIR);
  return Object.freeze({
    port: v.PORT,
    host: v.HOST,
    baseUrl: v.BASE_URL?.replace(/\/+$/, ''),
    database: v.DATABASE_URL ? { url: v.DATABASE_URL } : { dataDir: resolve(dataDir, 'db') },
    dataDir,
    mqtt: v.MQTT_URL
      ? {
          kind: 'external' as const,
          url: v.MQTT_URL,
          publicUrl: v.MQTT_PUBLIC_URL,
          caFile: v.MQTT_CA_FILE ? resolve(v.MQTT_CA_FILE) : undefined,
          clientId: v.MQTT_CLIENT_ID ?? stableClientId(v.PORT),
          accounts:
            v.MQTT_BROKER === 'rabbitmq'
              ? { kind: 'rabbitmq' as const, apiUrls: brokerUrls(v.RABBITMQ_API_URL ?? '') }
              : { kind: 'mosquitto' as const },
        }
      : embeddedMqtt(v),
    topicPrefix: v.MQTT_TOPIC_PREFIX,
    operatorToken: v.OPERATOR_TOKEN,
    releasePublicKey: v.RELEASE_PUBLIC_KEY,
    serviceKeyFile: v.SIGNING_KEY_FILE ? resolve(v.SIGNING_KEY_FILE) : resolve(dataDir, 'signing-key.pem'),
    vapidKeyFile: v.VAPID_KEY_FILE ? resolve(v.VAPID_KEY_FILE) : resolve(dataDir, 'vapid-key.pem'),
    vapidSubject: v.VAPID_SUBJECT,
    openRateLimit: v.OPEN_RATE_LIMIT,
    openQueueLimit: v.OPEN_QUEUE_LIMIT,
    smtpUrl: v.SMTP_URL,
    mailFrom: v.MAIL_FROM,
    devKeyfileUrl: v.GATELINK_DEV_KEYFILE_URL,
    allowPrivateCallbacks: v.GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS === '1',
    allowEmbeddedDatabase: v.GATELINK_ALLOW_EMBEDDED_DATABASE === '1',
    production,
    logLevel: v.LOG_LEVEL,
    trustProxy: v.TRUST_PROXY,
  });
}

type Env = z.infer<typeof envSchema>;

/** The embedded broker's settings: with a certificate, a TLS listener for devices and the plain one on loopback. */
function embeddedMqtt(v: Env): CloudConfig['mqtt'] {
  const tls =
    v.MQTT_TLS_CERT_FILE && v.MQTT_TLS_KEY_FILE
      ? {
          port: v.MQTT_TLS_PORT ?? DEFAULT_MQTT_TLS_PORT,
          host: v.MQTT_TLS_HOST ?? '0.0.0.0',
          certFile: resolve(v.MQTT_TLS_CERT_FILE),
          keyFile: resolve(v.MQTT_TLS_KEY_FILE),
        }
      : undefined;
  return {
    kind: 'embedded',
    port: v.MQTT_PORT,
    publicUrl: v.MQTT_PUBLIC_URL,
    tls,
    // Plain MQTT carries device passwords readable on the way: once devices have TLS, only this machine keeps
    // the plain listener, unless the operator says otherwise (docs/design.md section 7.4).
    plainHost: v.MQTT_PLAIN_HOST ?? (tls ? '127.0.0.1' : undefined),
  };
}

/** The TLS settings that do not go together, as the one line that stops the start; null when they do. */
function mqttTlsRefusal(v: Env): string | null {
  const cert = v.MQTT_TLS_CERT_FILE !== undefined;
  const key = v.MQTT_TLS_KEY_FILE !== undefined;
  if (cert !== key) {
    const [set, unset] = cert
      ? ['MQTT_TLS_CERT_FILE', 'MQTT_TLS_KEY_FILE']
      : ['MQTT_TLS_KEY_FILE', 'MQTT_TLS_CERT_FILE'];
    return `${set} is set without ${unset}: set both (the certificate chain and its private key, in PEM) or neither`;
  }
  if (v.MQTT_URL && cert) {
    return "MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE are for the embedded broker, and MQTT_URL names an external one: put the certificate in that broker's configuration (deploy/mosquitto/README.md) and unset them";
  }
  if (v.MQTT_TLS_PORT !== undefined && !cert) {
    return 'MQTT_TLS_PORT is set without MQTT_TLS_CERT_FILE and MQTT_TLS_KEY_FILE: set those too, or unset it';
  }
  if (v.MQTT_CA_FILE && !v.MQTT_URL) {
    return 'MQTT_CA_FILE is for an external broker (MQTT_URL), and MQTT_URL is unset: unset MQTT_CA_FILE';
  }
  return null;
}

/**
 * The external broker keeps an instance's session, and what arrived for it while it was down, under its client
 * id; an instance that comes back under the same id takes it up. Host and HTTP port name an instance: two
 * instances on one host cannot share a port. With a port chosen by the system (0) there is nothing stable to
 * name it by, and each start gets a session of its own (cloud/README.md, "Configuration").
 */
function stableClientId(port: number): string | undefined {
  if (port === 0) return undefined;
  const host = hostname()
    .replace(/[^A-Za-z0-9_.-]/g, '-')
    .slice(0, 40);
  return `gatelink-cloud-${host}-${port}`;
}

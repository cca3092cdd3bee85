import type { FastifyBaseLogger } from 'fastify';

export interface LogEntry {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

/** A logger that prints nothing and keeps every entry, so tests can see what the cloud noticed. */
export interface RecordingLogger extends FastifyBaseLogger {
  readonly entries: LogEntry[];
}

export function recordingLogger(entries: LogEntry[] = []): RecordingLogger {
  const at =
    (level: string) =>
    (first?: unknown, second?: unknown): void => {
      if (typeof first === 'string') entries.push({ level, fields: {}, msg: first });
      else
        entries.push({ level, fields: (first ?? {}) as Record<string, unknown>, msg: String(second ?? '') });
    };
  return {
    entries,
    level: 'silent',
    fatal: at('fatal'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    silent: () => {},
    child: () => recordingLogger(entries),
  };
}

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * What one cloud instance counts for Prometheus (docs/design.md section 8.1). Each instance has a registry of
 * its own, never prom-client's global one: several clouds in one process (the tests, a cluster on one machine)
 * then keep their counts apart. Every label is a closed set (actions, error codes, statuses, route templates,
 * outcomes); nothing is labelled by company, key or device, whose numbers have no bound.
 */
export const METRIC_PREFIX = 'gatelink_';

/** From 10 ms (an embedded broker on the same machine) to 10 s (past the acknowledgement timeout). */
export const OPEN_DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One answer of the company API, as counted. */
export interface CompanyAnswer {
  /** `request`, `status`, `open`, or `unknown` when `a` is missing or unknown. */
  action: string;
  /** `ok` for a 2xx, else the error code of the answer (shared/errors.ts). */
  code: string;
  status: number;
  /** From the call's arrival to its answer. */
  seconds: number;
}

/** A gauge read when Prometheus scrapes: `read` gives its value, or undefined to leave it as it was. */
export type ScrapeReading = () => Promise<number | undefined>;

export class CloudMetrics {
  readonly registry = new Registry();
  readonly #answers = new Counter({
    name: `${METRIC_PREFIX}company_api_answers_total`,
    help: 'Answers of POST /api/company.php, by action, answer code and HTTP status.',
    labelNames: ['action', 'code', 'status'] as const,
    registers: [this.registry],
  });
  readonly #openDuration = new Histogram({
    name: `${METRIC_PREFIX}open_duration_seconds`,
    help: 'Time from an a=open call arriving to its answer, by outcome (opened, or the answer code).',
    labelNames: ['outcome'] as const,
    buckets: OPEN_DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly #responses = new Counter({
    name: `${METRIC_PREFIX}http_responses_total`,
    help: 'HTTP answers by route template (unmatched for no route) and status.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly #acksApplied = new Counter({
    name: `${METRIC_PREFIX}acks_applied_total`,
    help: "Controllers' acknowledgements written to the journal by this instance (repeats not counted).",
    registers: [this.registry],
  });
  readonly #scrapeFailures = new Counter({
    name: `${METRIC_PREFIX}scrape_query_failures_total`,
    help: 'Gauges that could not be read at a scrape and kept their previous value, by gauge.',
    labelNames: ['gauge'] as const,
    registers: [this.registry],
  });
  readonly #updateReports = new Counter({
    name: `${METRIC_PREFIX}update_reports_total`,
    help: "Controllers' update reports applied to a rollout, by state and reason (none when without).",
    labelNames: ['state', 'reason'] as const,
    registers: [this.registry],
  });
  readonly #rolloutsHalted = new Counter({
    name: `${METRIC_PREFIX}rollouts_halted_total`,
    help: 'Rollouts that halted themselves because too many controllers rolled back.',
    registers: [this.registry],
  });

  readonly #positionReports = new Counter({
    name: `${METRIC_PREFIX}position_reports_total`,
    help: "Controllers' gate position reports, by what became of them (applied, repeat, stale, future, unknown_object, bad_signature, malformed, foreign).",
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly #pushAttempts = new Counter({
    name: `${METRIC_PREFIX}push_attempts_total`,
    help: 'Web Push attempts of notifications to customers, by result (sent, gone, failed, gave_up).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly #mailAttempts = new Counter({
    name: `${METRIC_PREFIX}mail_attempts_total`,
    help: 'E-mails of openings and daily digests handed to the mail server, by result (sent, failed, gave_up).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly #readings: (() => Promise<void>)[] = [];
  readonly #gaugeReads = new Map<string, ScrapeReading>();

  /** One Web Push attempt and its result (docs/design.md section 10.6). */
  pushAttempt(result: 'sent' | 'gone' | 'failed' | 'gave_up'): void {
    this.#pushAttempts.inc({ result });
  }

  /** One attempt of an e-mail of an opening or of a daily digest, and its result (docs/design.md section 10.7). */
  mailAttempt(result: 'sent' | 'failed' | 'gave_up'): void {
    this.#mailAttempts.inc({ result });
  }

  /** A controller's position report and what became of it (docs/design.md section 7.5). */
  positionReport(result: string): void {
    this.#positionReports.inc({ result });
  }

  /** A controller's update report, applied to its rollout (docs/design.md section 12.4.2). */
  updateReport(state: string, reason: string | undefined): void {
    this.#updateReports.inc({ state, reason: reason ?? 'none' });
  }

  /** A rollout halted by its roll-back threshold. */
  rolloutHalted(): void {
    this.#rolloutsHalted.inc();
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
  }

  /** One answer of the company API; an `open` also goes into the duration histogram. */
  companyAnswer(answer: CompanyAnswer): void {
    this.#answers.inc({ action: answer.action, code: answer.code, status: String(answer.status) });
    if (answer.action === 'open') {
      this.#openDuration.observe({ outcome: answer.code === 'ok' ? 'opened' : answer.code }, answer.seconds);
    }
  }

  httpResponse(route: string, status: number): void {
    this.#responses.inc({ route, status: String(status) });
  }

  ackApplied(): void {
    this.#acksApplied.inc();
  }

  /**
   * A gauge whose value is read at each scrape. A reading that gives undefined (it failed or took too long:
   * ./scrape-gauges.ts logs it) leaves the previous value and counts in `scrape_query_failures_total`.
   */
  gauge(name: string, help: string, read: ScrapeReading): void {
    const gauge = new Gauge({ name: `${METRIC_PREFIX}${name}`, help, registers: [this.registry] });
    this.#gaugeReads.set(name, read);
    this.#readings.push(async () => {
      // A reading is not meant to throw (./scrape-gauges.ts catches); one that does is a failed reading all the same.
      const value = await read().catch(() => undefined);
      if (value === undefined) this.#scrapeFailures.inc({ gauge: name });
      else gauge.set(value);
    });
  }

  /** One gauge's value now, read as a scrape reads it, without reading the others. */
  async gaugeValue(name: string): Promise<number | undefined> {
    return (
      (await this.#gaugeReads
        .get(name)?.()
        .catch(() => undefined)) ?? undefined
    );
  }

  /**
   * The Prometheus text exposition of everything above, once every gauge was read: so that a gauge that could
   * not be read is counted as such in the same scrape.
   */
  async text(): Promise<string> {
    await Promise.all(this.#readings.map((reading) => reading()));
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

import { STATUS_CODES } from 'node:http';
import type { VNode } from 'preact';
import { Layout } from '../../foundation/web/page.js';
import { type Example, mediaOf, type OpenApiDocument, type Operation } from './openapi-document.js';
import { type FieldWords, fieldsOf, resolveSchema } from './schema-words.js';

/**
 * The company API's reference page (docs/design.md section 1.1), drawn from the OpenAPI document alone: each
 * action with its fields, their types, limits and descriptions, how calls authenticate, the refusals each action
 * can answer and examples. It is public and the same for everyone: no session, no form.
 */

/** A description's `code` spans as code; the rest as text (escaped, as every Preact text is). */
function Prose(props: { text: string }): VNode {
  const parts = props.text.split('`');
  return <>{parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}

function Fields(props: { fields: FieldWords[]; label: string }): VNode {
  return (
    <dl class="api-fields" aria-label={props.label}>
      {props.fields.map((field) => (
        <div class="api-field" key={field.name}>
          <dt>
            <code class="api-name">{field.name}</code> <span class="api-type">{field.type}</span>{' '}
            <span class={field.required ? 'badge wait' : 'badge'}>
              {field.required ? 'required' : 'optional'}
            </span>
          </dt>
          <dd>
            {field.limits.length > 0 ? <p class="api-note api-limits">{field.limits.join(' · ')}</p> : null}
            {field.description ? (
              <p class="api-note">
                <Prose text={field.description} />
              </p>
            ) : null}
            {field.pattern ? (
              <p class="api-note small muted">
                Pattern: <code>{field.pattern}</code>
              </p>
            ) : null}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** An error code that may break only after its underscores, so a narrow column never splits a word. */
function BreakableCode(props: { code: string }): VNode {
  const words = props.code.split('_');
  return (
    <code>
      {words.map((word, i) => (
        <>
          {word}
          {i < words.length - 1 ? (
            <>
              _<wbr />
            </>
          ) : null}
        </>
      ))}
    </code>
  );
}

function Examples(props: { examples: Record<string, Example> }): VNode | null {
  const entries = Object.entries(props.examples);
  if (entries.length === 0) return null;
  return (
    <>
      {entries.map(([name, example]) => (
        <figure class="api-example" key={name}>
          <figcaption>
            <Prose text={example.summary} />
          </figcaption>
          <pre>
            <code>{JSON.stringify(example.value, null, 2)}</code>
          </pre>
        </figure>
      ))}
    </>
  );
}

/** A refusal as the page lists it: its status, code and the table's message (the example's summary). */
interface Refusal {
  status: string;
  code: string;
  message: string;
}

function refusalsOf(operation: Operation): Refusal[] {
  return Object.entries(operation.responses)
    .filter(([status]) => status !== '200')
    .flatMap(([status, response]) =>
      Object.entries(mediaOf(response).examples).map(([code, example]) => ({
        status,
        code,
        message: example.summary,
      })),
    );
}

/** The refusals every action lists: shown once, so each action's own stand out. */
function commonRefusals(operations: Operation[]): Refusal[] {
  const [first, ...rest] = operations.map(refusalsOf);
  return (first ?? []).filter((refusal) =>
    rest.every((others) => others.some((other) => other.code === refusal.code)),
  );
}

/** Refusals grouped by status: a row naming the status, then each code with its message. */
function ErrorTable(props: { refusals: Refusal[]; caption: string }): VNode {
  const statuses = [...new Set(props.refusals.map((refusal) => refusal.status))];
  return (
    <table class="api-errors">
      <caption class="visually-hidden">{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Code</th>
          <th scope="col">Message</th>
        </tr>
      </thead>
      {statuses.map((status) => (
        <tbody key={status}>
          <tr>
            <th scope="rowgroup" colSpan={2} class="api-status">
              {`${status} ${STATUS_CODES[Number(status)] ?? ''}`}
            </th>
          </tr>
          {props.refusals
            .filter((refusal) => refusal.status === status)
            .map((refusal) => (
              <tr key={refusal.code}>
                <td>
                  <BreakableCode code={refusal.code} />
                </td>
                <td>{refusal.message}</td>
              </tr>
            ))}
        </tbody>
      ))}
    </table>
  );
}

function Action(props: {
  document: OpenApiDocument;
  path: string;
  operation: Operation;
  common: Refusal[];
}): VNode {
  const { document, path, operation, common } = props;
  const body = operation.requestBody.content['application/json'];
  const answer = operation.responses['200']?.content['application/json'];
  const own = refusalsOf(operation).filter((refusal) => !common.some((other) => other.code === refusal.code));
  const idempotent = operation.parameters.length > 0;
  return (
    <section
      class="card api-section"
      id={operation.operationId}
      aria-labelledby={`${operation.operationId}-title`}
    >
      <h2 id={`${operation.operationId}-title`}>
        <code>{operation.operationId}</code>: {operation.summary}
      </h2>
      <p class="api-call">
        <code>POST {path}</code>
      </p>
      <p>
        <Prose text={operation.description} />
      </p>
      {idempotent ? (
        <p class="small">
          Takes an <code>Idempotency-Key</code> header: see <a href="#retries">Retries</a>.
        </p>
      ) : null}
      <h3>Body</h3>
      <Fields
        fields={fieldsOf(document, { $ref: body.schema.allOf?.[0]?.$ref ?? '' })}
        label={`${operation.operationId} body`}
      />
      <Examples examples={body.examples} />
      <h3>Answer (200)</h3>
      {answer ? (
        <>
          <Fields fields={fieldsOf(document, answer.schema)} label={`${operation.operationId} answer`} />
          <Examples examples={answer.examples} />
        </>
      ) : null}
      <h3>Errors</h3>
      {own.length > 0 ? (
        <>
          <p class="api-note">
            Besides <a href="#errors">those of every call</a>:
          </p>
          <ErrorTable refusals={own} caption={`Errors of ${operation.operationId}`} />
        </>
      ) : (
        <p>
          Only <a href="#errors">those of every call</a>.
        </p>
      )}
    </section>
  );
}

/** The events sent to the callback address: each kind with when it comes, its `data` fields and its example. */
function Events(props: { document: OpenApiDocument }): VNode {
  const { document } = props;
  const kinds = Object.entries(document.webhooks);
  const first = kinds[0]?.[1].post;
  return (
    <section class="card api-section" id="events" aria-labelledby="events-title">
      <h2 id="events-title">Events at your callback address</h2>
      {first ? (
        <p>
          <Prose text={first.description.replace(/^The `[^`]+` event, /, 'Each event is ')} />
        </p>
      ) : null}
      {kinds.map(([kind, { post }]) => {
        const body = post.requestBody.content['application/json'];
        const data = resolveSchema(document, body.schema).properties?.data;
        return (
          <section key={kind} id={`event-${kind}`} aria-labelledby={`event-${kind}-title`}>
            <h3 id={`event-${kind}-title`}>
              <code>{kind}</code>
            </h3>
            <p>
              <Prose text={post.summary} />
            </p>
            {typeof data === 'object' ? (
              <Fields fields={fieldsOf(document, data)} label={`${kind} data`} />
            ) : null}
            <Examples examples={body.examples} />
          </section>
        );
      })}
    </section>
  );
}

function Authentication(props: { document: OpenApiDocument }): VNode {
  const { document } = props;
  const schemes = Object.values(document.components.securitySchemes);
  return (
    <section class="card api-section" id="authentication" aria-labelledby="authentication-title">
      <h2 id="authentication-title">Authentication</h2>
      <p>Every call authenticates one of two ways.</p>
      <h3>Signature bound to your domain</h3>
      <p>All four headers, on every call:</p>
      <dl class="api-fields">
        {schemes.map((scheme) => (
          <div class="api-field" key={scheme.name}>
            <dt>
              <code class="api-name">{scheme.name}</code> <span class="api-type">header</span>
            </dt>
            <dd>
              <p>
                <Prose text={scheme.description} />
              </p>
            </dd>
          </div>
        ))}
      </dl>
      <h3>Secret (companies without a domain)</h3>
      <p>
        <Prose text={document.components.schemas.SecretCredentials?.description ?? ''} />
      </p>
      <Fields
        fields={fieldsOf(document, { $ref: '#/components/schemas/SecretCredentials' })}
        label="Secret mode fields"
      />
    </section>
  );
}

function Retries(props: { document: OpenApiDocument }): VNode {
  const key = props.document.components.parameters.IdempotencyKey;
  const requestId = props.document.components.headers.XRequestId;
  return (
    <section class="card api-section" id="retries" aria-labelledby="retries-title">
      <h2 id="retries-title">Retries and request ids</h2>
      <p>
        <code>Idempotency-Key</code> (header, <code>{key?.schema.pattern as string}</code>):{' '}
        <Prose text={key?.description ?? ''} />
      </p>
      <p>
        <code>X-Request-Id</code> (answer header): <Prose text={requestId?.description ?? ''} />
      </p>
    </section>
  );
}

export function ReferencePage(props: { document: OpenApiDocument }): VNode {
  const { document } = props;
  const operations = Object.entries(document.paths).map(([path, item]) => ({ path, operation: item.post }));
  const server = document.servers[0]?.url ?? '';
  const common = commonRefusals(operations.map(({ operation }) => operation));
  return (
    <Layout title="Company API reference" page={{ customer: null, csrfToken: '' }}>
      <section class="card">
        <h1>{document.info.title}</h1>
        <p class="muted">Version {document.info.version}</p>
        {document.info.description.split('\n\n').map((paragraph) => (
          <p key={paragraph}>
            <Prose text={paragraph} />
          </p>
        ))}
        <p>
          Base URL: <code>{server}</code>. The same contract as data, OpenAPI 3.1:{' '}
          <a href="/api/openapi.json">/api/openapi.json</a>.
        </p>
        <nav aria-label="Actions">
          <ul class="api-toc">
            {operations.map(({ operation }) => (
              <li key={operation.operationId}>
                <a href={`#${operation.operationId}`}>
                  <code>{operation.operationId}</code>: {operation.summary}
                </a>
              </li>
            ))}
            <li>
              <a href="#errors">Errors of every call</a>
            </li>
            <li>
              <a href="#authentication">Authentication</a>
            </li>
            <li>
              <a href="#events">Events at your callback address</a>
            </li>
            <li>
              <a href="#retries">Retries and request ids</a>
            </li>
          </ul>
        </nav>
      </section>
      {operations.map(({ path, operation }) => (
        <Action key={path} document={document} path={path} operation={operation} common={common} />
      ))}
      <section class="card api-section" id="errors" aria-labelledby="errors-title">
        <h2 id="errors-title">Errors of every call</h2>
        <p>
          Every refusal is <code>{'{"error": "<code>", "message": "<one sentence>"}'}</code>, with{' '}
          <code>field</code> for <code>invalid_field</code> and <code>detail</code> for{' '}
          <code>device_error</code>; the message may say more than the one below. Any action can answer these:
        </p>
        <ErrorTable refusals={common} caption="Errors of every call" />
      </section>
      <Authentication document={document} />
      <Retries document={document} />
      <Events document={document} />
    </Layout>
  );
}

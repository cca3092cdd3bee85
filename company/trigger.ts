import { EVENT_KINDS, type EventKind } from '../shared/company-api/events.js';
import { type Command, required, toolCommand } from './command.js';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, companyClient } from './connection.js';
import { UsageError } from './key-file.js';
import { printJson } from './printing.js';

/** `trigger`: a sample event of any kind (cloud/README.md, "Trying events"). */
export const trigger: Command = {
  name: 'trigger',
  summary: 'send a sample event of any kind to your callback address and your listen streams',
  usage: `Usage: gatelink-company trigger KIND [--json]

Sends a sample event of KIND (also --type KIND): the example of its kind in the cloud's README, with a new id
and the time now. It is delivered like any event: to your callback address if it takes that kind (the account
area's callback page), signed and retried, and to every \`listen\` of yours. Prints the event's id; --json prints {"id", "type"}.

Kinds: ${EVENT_KINDS.join(', ')}

${CONNECTION_USAGE}`,
  options: { ...CONNECTION_OPTIONS, type: { type: 'string' }, json: { type: 'boolean' } },
  positional: 'type',
  async run(values, io, env) {
    const kind = required(values, 'type', `the kind of event, one of ${EVENT_KINDS.join(', ')}`);
    if (!(EVENT_KINDS as readonly string[]).includes(kind)) {
      throw new UsageError(`${kind} is not a kind of event; the kinds are ${EVENT_KINDS.join(', ')}`);
    }
    const answer = await companyClient(values, env).trigger(kind as EventKind);
    if (values.json === true) printJson(io, answer);
    else {
      io.out(`Sent a sample ${answer.type} event, id ${answer.id}.
It goes to every \`${toolCommand(env)} listen\` of yours, and to your callback address if it takes that kind.
`);
    }
    return 0;
  },
};

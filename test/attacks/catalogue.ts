/**
 * Every attack the project defends against, with where the rule comes from. A test that tries one carries its
 * id in its name, `[attack:<id>]`; `npm run attacks` (run.ts) runs the suites and prints each attack with its
 * tests and their results, and catalogue.test.ts keeps the list and the tags in step.
 */
export interface Attack {
  /** `<area>.<what>`, used in test names as `[attack:<id>]`. */
  id: string;
  /** The attack, as a hostile client would try it. */
  attack: string;
  /** Where the defence is required. */
  source: string;
}

export const ATTACKS: readonly Attack[] = [
  // The outside attack run of issue 11.
  {
    id: 'mqtt.oversized-connect',
    attack: 'a client that never logs in declares a huge CONNECT and streams its bytes to grow the memory',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.oversized-packet',
    attack: 'an authenticated device sends a packet far larger than any message it needs',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.half-open-flood',
    attack: 'one address opens many connections that never finish CONNECT',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.slow-connect',
    attack: 'a connection that never finishes its CONNECT holds its place forever',
    source: 'issue 11, finding 1',
  },
  {
    id: 'mqtt.bad-login-burst',
    attack: 'a burst of MQTT logins with wrong credentials while real openings go on',
    source: 'issue 11, resource abuse',
  },
  {
    id: 'journal.pending-after-crash',
    attack: 'the cloud dies mid-open: the entry stays pending and a retry finds the call in flight forever',
    source: 'issue 11, finding 2',
  },
  {
    id: 'data.second-instance',
    attack: 'a second cloud starts on the same embedded-database folder and both write its files',
    source: 'issue 11, finding 3',
  },
  {
    id: 'data.file-modes',
    attack: 'another local user reads the database, operator token or keys in the data folder',
    source: 'issue 11, finding 3',
  },
  {
    id: 'http.parser-error',
    attack:
      "a request Node's HTTP parser refuses is answered outside the error contract, without X-Request-Id",
    source: 'issue 11, finding 4; decisions.md section 1',
  },
  {
    id: 'http.wrong-method',
    attack: 'GET or PUT on /api/company.php',
    source: 'issue 11, finding 4',
  },
  {
    id: 'text.invisible-characters',
    attack: 'an actor or ref with line or paragraph separators or invisible format characters',
    source: 'issue 11, finding 5; decisions.md section 4',
  },
  {
    id: 'http.slow-client',
    attack: 'slow HTTP clients send their headers one byte a second while real openings go on',
    source: 'issue 11, resource abuse',
  },
  {
    id: 'fuzz.company-api',
    attack: 'arbitrary bodies, headers, content types and sizes on the company API',
    source: 'issue 11, campaign; decisions.md section 1',
  },
  {
    id: 'fuzz.device-messages',
    attack: 'arbitrary payloads on every kind of device message, on both brokers',
    source: 'issue 11, campaign; decisions.md section 7',
  },
  {
    id: 'fuzz.command-parser',
    attack: "arbitrary bytes as a command to the controller's parser",
    source: 'issue 11, campaign; decisions.md section 7',
  },
  {
    id: 'chaos.kill-restart',
    attack:
      'the broker restarts and the controller and a cloud instance are killed with SIGKILL while companies open',
    source: 'issue 11, campaign',
  },
];

import { BROKER_KINDS } from '../support/broker-env.js';
import { brokerBehaviour } from './broker-behaviour-suite.js';

/** The controller link's behaviour on the embedded broker and an external Mosquitto (./broker-behaviour-suite.ts). */
for (const kind of BROKER_KINDS) brokerBehaviour(kind);

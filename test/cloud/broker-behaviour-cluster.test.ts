import { brokerBehaviour } from './broker-behaviour-suite.js';

/**
 * The controller link's behaviour on a three-node RabbitMQ cluster (./broker-behaviour-suite.ts), in a file of its
 * own: starting three Erlang nodes takes the better part of a minute on a busy machine, and here it runs beside
 * the other files instead of after the embedded broker and Mosquitto in one.
 */
// Each test may take 60 s: the 20 s of other tests ran out once on a busy machine while the cluster ended an old
// session (addDevice), which it does in well under a second when idle.
brokerBehaviour('cluster', 180_000, 60_000);

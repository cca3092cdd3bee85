import { brokerBehaviour } from './broker-behaviour-suite.js';

/**
 * The controller link's behaviour on a three-node RabbitMQ cluster (./broker-behaviour-suite.ts), in a file of its
 * own: starting three Erlang nodes takes the better part of a minute on a busy machine, and here it runs beside
 * the other files instead of after the embedded broker and Mosquitto in one.
 */
brokerBehaviour('cluster', 180_000);

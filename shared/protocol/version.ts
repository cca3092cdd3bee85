/**
 * The version of the payloads in ./messages.ts, in a file of its own so that the controller can name it before it
 * loads the schemas (docs/design.md section 12.1).
 */
export const PROTOCOL_VERSION = 1;

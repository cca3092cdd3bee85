/**
 * The device's private key file cannot be used; the message says what to do. In a file of its own so that the
 * CLI can tell this error apart without loading the signing code (docs/design.md section 12.1).
 */
export class KeyFileError extends Error {
  override name = 'KeyFileError';
}

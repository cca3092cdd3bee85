/** A failure the CLI reports as one readable line that says what to do next. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

export const DEFAULT_CONFIG = '/etc/gatelink/device.yaml';

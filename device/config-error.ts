/**
 * A config file that cannot be used; `problems` holds one readable line per bad value. In a file of its own so
 * that the CLI can tell this error apart without loading the config schema (docs/design.md section 12.1).
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[]) {
    super(`${file}: the configuration is not valid:\n${problems.map((line) => `  ${line}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * Exit codes of a start-up that failed (sysexits.h): a setting that is wrong
 * (the environment, a role or password, a database that does not exist) is
 * EX_CONFIG, and restarting will not help; a server that could not be
 * reached is EX_UNAVAILABLE, and a restart later may. Anything else exits 1.
 */
export const EXIT_CONFIG = 78;
export const EXIT_UNAVAILABLE = 69;

/**
 * Why the service could not start, as one line: the variable that names
 * what failed, then what happened (`DATABASE_URL: PostgreSQL at
 * 127.0.0.1:5488: connection refused`). main.ts prints it without a stack
 * trace and exits with `exitCode`.
 */
export class StartupFailure extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
    readonly exitCode: typeof EXIT_CONFIG | typeof EXIT_UNAVAILABLE,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'StartupFailure';
  }
}

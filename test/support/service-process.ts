import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { TEST_JWT_SECRET, TEST_REDIS_URL } from './test-env.js';

/**
 * Helpers for fault tests that run real processes: the built service as a
 * child process, plus the process plumbing OwnPostgres and OwnRedis share.
 *
 * Cleanup if Jest dies: Jest hands each test file a copy of `process` whose
 * 'exit' listeners never run, so children are tied to the Jest process by the
 * kernel instead (parent-death signal, see spawnTiedToParent), which also
 * covers Jest being killed with SIGKILL.
 */

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Polls `condition` until it holds, at most `timeoutMs`. For states with no
 * event to wait on (a process state in /proc, a server accepting connections).
 */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000, intervalMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The one-letter state from /proc/<pid>/stat (R, S, D, T, Z, ...), or undefined once the process is gone. */
export function processState(pid: number): string | undefined {
  return readStat(pid)?.state;
}

/** Gone, or a zombie nobody has reaped yet: either way it runs no more. */
export function isGone(pid: number): boolean {
  const state = processState(pid);
  return state === undefined || state === 'Z' || state === 'X';
}

/** Direct children of `parentPid`, from the ppid field in /proc/<pid>/stat. */
export function childPids(parentPid: number): number[] {
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (readStat(pid)?.ppid === parentPid) children.push(pid);
  }
  return children;
}

/** Sends `signal`, ignoring processes that already exited. */
export function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

function readStat(pid: number): { state: string; ppid: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name in parentheses may itself contain spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], ppid: Number(fields[1]) };
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((candidate) => fs.existsSync(candidate));

/**
 * Spawns `command` so the kernel SIGKILLs it when this process dies, however
 * it dies. setpriv execs the command, so `child.pid` is the command's own pid.
 */
export function spawnTiedToParent(command: string, args: string[], options: SpawnOptions): ChildProcess {
  if (!SETPRIV) return spawn(command, args, options);
  return spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], options);
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Resolves when the child has exited (immediately if it already has). */
export function exitOf(child: ChildProcess): Promise<ExitStatus> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode as NodeJS.Signals | null });
  }
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn that failed (no pid) emits 'error' and never 'exit'.
    child.once('error', () => child.pid === undefined && resolve({ code: null, signal: null }));
  });
}

/** A line of output and, when it is one of pino's JSON lines, its parsed entry. */
export type LogMatcher = RegExp | ((line: string, entry: Record<string, unknown> | undefined) => boolean);

export interface StartServiceOptions {
  /** Where dist/main.js is; the repository root (Jest's working directory) by default. */
  cwd?: string;
  /** The service's working directory (where it reads .env and KNOWLEDGE_CORPUS_DIR); `cwd` by default. */
  workingDirectory?: string;
  startupTimeoutMs?: number;
  /** Variables of this process's environment (and of the defaults) the service must not see. */
  unset?: readonly string[];
  /** Runs the service inside this network namespace, reached at its address (see network-namespace.ts). */
  namespace?: { name: string; address: string };
}

/**
 * The built service (dist/main.js, as `npm run build` leaves it) running as
 * a child process. Output is kept line by line; waitForLog resolves on the
 * data event that brings the matching line.
 */
export class ServiceProcess {
  readonly exited: Promise<ExitStatus>;
  /** Resolves when the process has exited and its output has been read to the end (every line collected). */
  readonly closed: Promise<ExitStatus>;
  /** Resolves with the error when the process could not be spawned at all. */
  readonly spawnError: Promise<Error>;
  readonly baseUrl: string;
  private readonly collected: string[] = [];
  private readonly listeners = new Set<(line: string) => void>();
  private stopping?: Promise<ExitStatus>;

  constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    host = '127.0.0.1',
  ) {
    this.baseUrl = `http://${host}:${port}`;
    this.exited = exitOf(child);
    this.spawnError = new Promise((resolve) => child.once('error', resolve));
    this.closed = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    this.collectLines(child.stdout!);
    this.collectLines(child.stderr!);
    child.on('error', (error) => this.addLine(`[child process error] ${error.message}`));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Every line so far, stdout and stderr interleaved as they arrived. */
  lines(): string[] {
    return [...this.collected];
  }

  /** The message of every JSON log line so far, in order; with `level`, of that pino level only (40: warnings). */
  messages(level?: number): string[] {
    return this.collected
      .map(parseEntry)
      .filter((entry): entry is Record<string, unknown> => entry !== undefined && (level === undefined || entry.level === level))
      .map((entry) => String(entry.msg));
  }

  output(): string {
    return this.collected.join('\n');
  }

  /**
   * Resolves with the first line from index `fromLine` on (0: everything
   * collected so far, then new lines) that matches; rejects on timeout or
   * when the process exits first. Pass `lines().length` to skip older lines.
   */
  waitForLog(match: LogMatcher, timeoutMs = 10_000, fromLine = 0): Promise<string> {
    const wanted = describeMatcher(match);
    const matches = (line: string) => (match instanceof RegExp ? match.test(line) : match(line, parseEntry(line)));
    const earlier = this.collected.slice(fromLine).find(matches);
    if (earlier !== undefined) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      const settle = (outcome: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(onLine);
        outcome();
      };
      const onLine = (line: string) => {
        if (matches(line)) settle(() => resolve(line));
      };
      const timer = setTimeout(() => settle(() => reject(new Error(`no log line matching ${wanted} within ${timeoutMs} ms\n${this.tail()}`))), timeoutMs);
      this.listeners.add(onLine);
      void this.exited.then((status) => {
        if (this.listeners.has(onLine)) {
          settle(() => reject(new Error(`service exited (${describeExit(status)}) before logging ${wanted}\n${this.tail()}`)));
        }
      });
    });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    return this.hasExited ? false : this.child.kill(signal);
  }

  /** SIGTERM (graceful shutdown), SIGKILL if still running after `graceMs`. Safe to call again. */
  stop(graceMs = 10_000): Promise<ExitStatus> {
    this.stopping ??= (async () => {
      if (this.hasExited) return this.exited;
      this.child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const killed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.child.kill('SIGKILL');
          resolve();
        }, graceMs);
      });
      await Promise.race([this.exited, killed]);
      clearTimeout(timer);
      return this.exited;
    })();
    return this.stopping;
  }

  /** The last lines of output, for error messages. */
  tail(count = 40): string {
    return this.collected.slice(-count).join('\n');
  }

  private collectLines(stream: NodeJS.ReadableStream): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const pieces = (partial + chunk).split('\n');
      partial = pieces.pop()!;
      for (const line of pieces) this.addLine(line);
    });
    stream.on('end', () => {
      if (partial) this.addLine(partial);
      partial = '';
    });
  }

  private addLine(line: string): void {
    this.collected.push(line);
    for (const listener of [...this.listeners]) listener(line);
  }
}

function parseEntry(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function describeMatcher(match: LogMatcher): string {
  return match instanceof RegExp ? String(match) : match.name || 'the predicate';
}

function describeExit(status: ExitStatus): string {
  return status.signal ? `signal ${status.signal}` : `code ${status.code}`;
}

function isListeningLine(_line: string, entry: Record<string, unknown> | undefined): boolean {
  return typeof entry?.msg === 'string' && entry.msg.startsWith('listening');
}

/**
 * Starts the built service on a free port and resolves once it logged
 * 'listening'. `env` overrides the defaults (test NODE_ENV, the suite's JWT
 * secret and Redis database, LOG_LEVEL info); set DATABASE_URL. If the
 * service dies or does not come up, rejects with its output.
 */
export async function startService(env: Record<string, string>, options: StartServiceOptions = {}): Promise<ServiceProcess> {
  const service = await spawnService(env, options);
  const spawnFailed = new Promise<never>((_, reject) => service.spawnError.then(reject));
  spawnFailed.catch(() => undefined); // an error after start-up is only logged (see ServiceProcess)
  try {
    await Promise.race([service.waitForLog(isListeningLine, options.startupTimeoutMs ?? 20_000), spawnFailed]);
  } catch (error) {
    await service.stop(2_000);
    throw error;
  }
  return service;
}

/**
 * The built service as startService runs it (same defaults, a free port),
 * without waiting for it to listen: for start-ups that are meant to fail
 * (`await service.exited`) or to be watched line by line.
 */
export async function spawnService(env: Record<string, string>, options: Omit<StartServiceOptions, 'startupTimeoutMs'> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const root = options.cwd ?? process.cwd();
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: '',
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: options.namespace ? '0.0.0.0' : '127.0.0.1',
    LOG_LEVEL: 'info',
    JWT_SECRET: TEST_JWT_SECRET,
    REDIS_URL: TEST_REDIS_URL,
    ...env,
  };
  for (const name of options.unset ?? []) delete environment[name];
  const main = [process.execPath, path.join(root, 'dist/main.js')];
  const [command, ...args] = options.namespace ? ['ip', 'netns', 'exec', options.namespace.name, ...main] : main;
  const child = spawnTiedToParent(command, args, { cwd: options.workingDirectory ?? root, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
  return new ServiceProcess(child, port, options.namespace?.address);
}

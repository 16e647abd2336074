import { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { exitOf, ExitStatus, freePort, isGone, processState, spawnTiedToParent, waitUntil } from './service-process.js';

const READY_LINE = /Ready to accept connections/;

/**
 * A redis-server of the test's own, as a child process on a free loopback
 * port, for tests that pause, kill and restart it. Nothing is persisted.
 */
export class OwnRedis {
  port = 0;
  private child?: ChildProcess;
  private exited?: Promise<ExitStatus>;
  private paused = false;
  private log = '';

  /** The server's pid while it runs. */
  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  url(db = 0): string {
    return `redis://127.0.0.1:${this.port}/${db}`;
  }

  /** Everything the server printed, across restarts. */
  output(): string {
    return this.log;
  }

  /** Starts the server (on the port it had before, after a stop) and resolves once it answers PING. */
  async start(): Promise<this> {
    if (this.running) return this;
    const keepPort = this.port !== 0;
    for (let attempt = 1; ; attempt += 1) {
      if (!keepPort) this.port = await freePort();
      const logStart = this.log.length;
      try {
        await this.launch();
        return this;
      } catch (error) {
        // Another process may take the port between freePort() and the bind.
        const portTaken = /Address already in use/.test(this.log.slice(logStart));
        if (keepPort || !portTaken || attempt === 3) throw error;
      }
    }
  }

  /** SIGSTOP: connections stay open, nothing is answered. Resolves once the process is stopped. */
  async pause(): Promise<void> {
    const pid = this.requirePid('pause');
    process.kill(pid, 'SIGSTOP');
    this.paused = true;
    await waitUntil(() => processState(pid) === 'T', `redis-server ${pid} to stop`, 5_000);
  }

  async resume(): Promise<void> {
    const pid = this.requirePid('resume');
    process.kill(pid, 'SIGCONT');
    this.paused = false;
    await waitUntil(() => processState(pid) !== 'T', `redis-server ${pid} to continue`, 5_000);
  }

  /** SIGKILL, no shutdown at all; resolves once the process is gone. */
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.child!.kill('SIGKILL');
    await this.exited;
    this.paused = false;
  }

  /** SIGTERM (SIGKILL after `graceMs`); resolves once the process is gone. Safe to call when not running. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.running) return;
    const pid = this.child!.pid!;
    this.child!.kill('SIGTERM');
    if (this.paused) process.kill(pid, 'SIGCONT'); // a stopped process acts on SIGTERM only once continued
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([this.exited, deadline]);
    clearTimeout(timer);
    if (this.running) await this.kill9();
    this.paused = false;
  }

  /** Stops it if it runs, then starts it again on the same port. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Same as stop(); for symmetry with OwnPostgres. */
  destroy(): Promise<void> {
    return this.stop();
  }

  /** True if the server answers PING within `timeoutMs`. */
  ping(timeoutMs = 1_000): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect(this.port, '127.0.0.1');
      let reply = '';
      const finish = (answered: boolean) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(answered);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      socket.on('connect', () => socket.write('PING\r\n'));
      socket.on('data', (chunk) => {
        reply += chunk.toString('latin1');
        if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
      });
      socket.on('error', () => finish(false));
    });
  }

  private async launch(): Promise<void> {
    const child = spawnTiedToParent('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.paused = false;
    this.exited = exitOf(child);
    const logStart = this.log.length;
    const ready = new Promise<void>((resolve, reject) => {
      const onOutput = (chunk: Buffer) => {
        this.log += chunk.toString('utf8');
        if (READY_LINE.test(this.log.slice(logStart))) resolve();
      };
      child.stdout!.on('data', onOutput);
      child.stderr!.on('data', onOutput);
      child.once('error', reject);
      void this.exited!.then((status) => reject(new Error(`redis-server exited (code ${status.code}, signal ${status.signal}) before it was ready:\n${this.log.slice(-2000)}`)));
    });
    // Ready is its log line; a server that exits first rejects. A hang is the test runner's timeout to report.
    try {
      await ready;
    } catch (error) {
      if (this.running) await this.kill9();
      throw error;
    }
    if (!(await this.ping())) throw new Error(`redis-server on port ${this.port} logged ready but does not answer PING`);
  }

  private requirePid(action: string): number {
    const pid = this.pid;
    if (pid === undefined || isGone(pid)) throw new Error(`cannot ${action}: redis-server is not running`);
    return pid;
  }
}

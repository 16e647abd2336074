import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { childPids, exitOf, freePort, isGone, processState, signalAll, waitUntil } from './service-process.js';

const run = promisify(execFile);

const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const OS_USER = 'postgres';

export type PgStopMode = 'fast' | 'immediate';
type ClusterState = 'new' | 'running' | 'paused' | 'stopped' | 'destroyed';

/**
 * Runs when the Jest process is gone (its end of the stdin pipe closes, even
 * on SIGKILL) unless told "disarm" first: stops the cluster's server and
 * removes its directory. Arguments: temp dir, data dir, pg_ctl.
 */
const WATCHDOG_SCRIPT = `
read -r command
[ "$command" = disarm ] && exit 0
pidfile="$2/postmaster.pid"
if [ -f "$pidfile" ]; then
  pid=$(head -n 1 "$pidfile")
  if [ -n "$pid" ] && tr '\\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2"; then
    children=$(pgrep -P "$pid")
    kill -CONT "$pid" $children 2>/dev/null
    runuser -u ${OS_USER} -- "$3" -D "$2" stop -m immediate -w -t 10 >/dev/null 2>&1 || kill -KILL "$pid" $children 2>/dev/null
  fi
fi
if [ -f "$pidfile" ]; then
  key=$(sed -n 7p "$pidfile" | awk '{print $1}')
  shmid=$(sed -n 7p "$pidfile" | awk '{print $2}')
  awk -v key="$key" -v id="$shmid" '$1 == key && $2 == id && $7 == 0 { found = 1 } END { exit !found }' /proc/sysvipc/shm 2>/dev/null && ipcrm -m "$shmid"
fi
rm -rf "$1"
`;

/**
 * A PostgreSQL cluster of the test's own (fresh initdb in a temp directory,
 * trust auth, 127.0.0.1 on a free port), for tests that stop, pause, kill
 * and restart the database server. Never touches the shared server.
 *
 * Call destroy() in afterAll: it is idempotent and stops and removes
 * everything whatever state the cluster was left in. If Jest dies without
 * it, a watchdog process does the same.
 */
export class OwnPostgres {
  /**
   * A streaming replica of `primary` (running): `pg_basebackup -R` of it into
   * a cluster of its own, a hot standby on its own port, following the
   * primary's WAL. Stop, pause and kill it like any other.
   */
  static replicaOf(primary: OwnPostgres): OwnPostgres {
    const replica = new OwnPostgres();
    replica.primary = primary;
    return replica;
  }

  port = 0;
  /** Set for a replica: what it was copied from and follows. */
  private primary?: OwnPostgres;
  /** The temp directory: data/ (the cluster), socket/, postgres.log. */
  dir = '';
  private state: ClusterState = 'new';
  private watchdog?: ChildProcess;
  private destroying?: Promise<void>;
  private cleaning?: Promise<void>;
  private starting?: Promise<unknown>;

  get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  get logFile(): string {
    return path.join(this.dir, 'postgres.log');
  }

  get running(): boolean {
    return this.state === 'running' || this.state === 'paused';
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Creates the cluster on the first call; starts the server (same port, same data) if it is not running. */
  start(): Promise<this> {
    const starting = this.startServer();
    this.starting = starting.catch(() => undefined);
    return starting;
  }

  private async startServer(): Promise<this> {
    if (this.state === 'destroyed') throw new Error('OwnPostgres: start() after destroy()');
    if (this.running) return this;
    if (this.state === 'new') {
      try {
        await this.createCluster();
        await this.startOnFreePort();
      } catch (error) {
        await this.cleanUp();
        throw error;
      }
    } else {
      this.removeLockFilesOfZombie();
      await this.pgCtl(['start', '-l', this.logFile, '-w', '-t', '60']);
    }
    this.state = 'running';
    return this;
  }

  async createDatabase(name: string): Promise<string> {
    const client = new pg.Client({ connectionString: this.url('postgres'), connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  /** pg_ctl stop -m <mode>, waiting until the server is down. Resumes a paused server first. */
  async stop(mode: PgStopMode = 'fast'): Promise<void> {
    if (!this.running) return;
    if (this.livePostmasterPid() === undefined) {
      this.state = 'stopped'; // it died on its own
      return;
    }
    if (this.state === 'paused') await this.resume();
    await this.pgCtl(['stop', '-m', mode, '-w', '-t', '60']);
    this.state = 'stopped';
  }

  /** Starts the same cluster again, on the same port with its data; stops it first (fast) if it runs. */
  async restart(): Promise<void> {
    await this.stop('fast');
    await this.start();
  }

  /**
   * SIGSTOP to the postmaster and every backend and auxiliary process:
   * connections stay open and nothing answers. Resolves once all are stopped.
   */
  async pause(): Promise<void> {
    const postmaster = this.requirePostmaster('pause');
    // Stopped first, the postmaster forks no new children while we list them.
    process.kill(postmaster, 'SIGSTOP');
    await waitUntil(() => processState(postmaster) === 'T', `postmaster ${postmaster} to stop`, 5_000);
    const children = childPids(postmaster);
    signalAll(children, 'SIGSTOP');
    await waitUntil(() => children.every((pid) => isGone(pid) || processState(pid) === 'T'), 'the backends to stop', 5_000);
    this.state = 'paused';
  }

  async resume(): Promise<void> {
    const postmaster = this.requirePostmaster('resume');
    const all = [...childPids(postmaster), postmaster];
    signalAll(all, 'SIGCONT');
    await waitUntil(() => all.every((pid) => processState(pid) !== 'T'), 'the server processes to continue', 5_000);
    this.state = 'running';
  }

  /** SIGKILL to the postmaster and all its children: a crash; restart() then runs crash recovery. */
  async kill9(): Promise<void> {
    const postmaster = this.livePostmasterPid();
    if (postmaster !== undefined) {
      // Stopped, it neither forks nor reacts to its children dying while we kill them.
      process.kill(postmaster, 'SIGSTOP');
      await waitUntil(() => isGone(postmaster) || processState(postmaster) === 'T', `postmaster ${postmaster} to stop`, 5_000);
      // Children first: no backend lives to see the postmaster die and say so to its client.
      const all = [...childPids(postmaster), postmaster];
      signalAll(all, 'SIGKILL');
      await waitUntil(() => all.every(isGone), 'the killed server processes to go', 10_000);
    }
    if (this.state !== 'new' && this.state !== 'destroyed') this.state = 'stopped';
  }

  /** The postmaster and its children while the server runs (empty otherwise). */
  pids(): number[] {
    const postmaster = this.livePostmasterPid();
    return postmaster === undefined ? [] : [postmaster, ...childPids(postmaster)];
  }

  /** The server log so far (the last `maxChars`). */
  log(maxChars = 4_000): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').slice(-maxChars);
    } catch {
      return '';
    }
  }

  /** Stops whatever runs, removes the temp directory. Idempotent; safe in any state. */
  destroy(): Promise<void> {
    this.destroying ??= (async () => {
      // A start still under way (say, from a beforeAll that timed out) would leave a server behind.
      await this.starting;
      await this.cleanUp();
    })();
    return this.destroying;
  }

  private cleanUp(): Promise<void> {
    this.cleaning ??= this.stopAndRemoveEverything();
    return this.cleaning;
  }

  private async stopAndRemoveEverything(): Promise<void> {
    try {
      if (!this.dir) return;
      const postmaster = this.livePostmasterPid();
      if (postmaster !== undefined) {
        signalAll([postmaster, ...childPids(postmaster)], 'SIGCONT');
        try {
          await this.pgCtl(['stop', '-m', 'immediate', '-w', '-t', '10']);
        } catch {
          await this.kill9();
        }
      }
      await this.removeOrphanedSharedMemory();
    } finally {
      this.state = 'destroyed';
      if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
      await this.disarmWatchdog();
    }
  }

  private async createCluster(): Promise<void> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'own-pg-'));
    this.armWatchdog();
    const { uid, gid } = osUser(OS_USER);
    fs.chownSync(this.dir, uid, gid);
    fs.mkdirSync(path.join(this.dir, 'socket'));
    fs.chownSync(path.join(this.dir, 'socket'), uid, gid);
    if (this.primary) {
      if (!this.primary.running) throw new Error('OwnPostgres: a replica of a primary that does not run');
      // -R: standby.signal and primary_conninfo; the copied postgresql.conf already includes fault-test.conf.
      // --checkpoint=fast: the backup starts at once instead of after a spread checkpoint (minutes, once the primary has written).
      await this.asPostgres('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(this.primary.port),
        '-U',
        'postgres',
        '-D',
        this.dataDir,
        '-R',
        '-X',
        'stream',
        '--checkpoint=fast',
        '--no-sync',
      ]);
      return;
    }
    await this.asPostgres('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions']);
    fs.appendFileSync(path.join(this.dataDir, 'postgresql.conf'), "\ninclude 'fault-test.conf'\n");
  }

  /** On a replica: stops applying the WAL it receives (pg_wal_replay_pause), so its data stays behind the primary's. */
  async pauseReplay(): Promise<void> {
    await this.query('SELECT pg_wal_replay_pause()');
    await waitUntil(async () => (await this.query("SELECT pg_get_wal_replay_pause_state() = 'paused' AS paused")).rows[0].paused === true, 'the replay to pause', 60_000, 20);
  }

  /** On a replica: applies the WAL again (and catches up). */
  async resumeReplay(): Promise<void> {
    await this.query('SELECT pg_wal_replay_resume()');
  }

  /**
   * On a primary: SIGSTOP to its WAL senders. Its replicas stay connected
   * (their WAL receivers live on, until wal_receiver_timeout) and get nothing
   * more: a stalled stream. Resolves with the senders, for releaseWalSenders.
   */
  async holdWalSenders(): Promise<number[]> {
    const senders = (await this.query('SELECT pid FROM pg_stat_replication')).rows.map((row) => Number(row.pid));
    if (senders.length === 0) throw new Error('OwnPostgres: holdWalSenders() on a primary with no replica connected');
    signalAll(senders, 'SIGSTOP');
    await waitUntil(() => senders.every((pid) => isGone(pid) || processState(pid) === 'T'), 'the WAL senders to stop', 5_000);
    return senders;
  }

  releaseWalSenders(senders: number[]): void {
    signalAll(senders, 'SIGCONT');
  }

  /** On a replica: promotes it to a primary of its own (a failover to it), on a new timeline; it follows nothing after. */
  async promote(): Promise<void> {
    const { rows } = await this.query('SELECT pg_promote(true, 60) AS promoted');
    if (rows[0].promoted !== true) throw new Error('OwnPostgres: the replica was not promoted within 60 s');
    this.primary = undefined;
  }

  /** Resolves once this replica has replayed everything the primary had written when it was called. */
  async caughtUp(): Promise<void> {
    if (!this.primary) throw new Error('OwnPostgres: caughtUp() on a cluster that is no replica');
    const { rows } = await this.primary.query('SELECT pg_current_wal_lsn()::text AS lsn');
    const target = rows[0].lsn as string;
    await waitUntil(
      async () => (await this.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [target])).rows[0].done === true,
      `the replica to replay up to ${target}`,
      60_000,
      20,
    );
  }

  /** One statement on the `postgres` database, on a connection of its own. */
  async query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: this.url('postgres'), connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  }

  /** The free port can be taken by someone else before the server binds it: then try another. */
  private async startOnFreePort(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      this.port = await freePort();
      this.writeSettings();
      try {
        await this.pgCtl(['start', '-l', this.logFile, '-w', '-t', '60']);
        return;
      } catch (error) {
        if (attempt === 3 || !/could not bind|Address already in use/.test(this.log())) throw error;
      }
    }
  }

  private writeSettings(): void {
    const settings = {
      listen_addresses: "'127.0.0.1'",
      port: String(this.port),
      unix_socket_directories: `'${path.join(this.dir, 'socket')}'`,
      // Fast, but a commit survives a SIGKILL: its WAL is written to the OS before COMMIT returns (only fsync, which
      // matters when the machine itself crashes, is off). With synchronous_commit off a kill -9 right after a commit
      // lost it now and then (fault-support's "keeping the data" failed in a loaded CI run).
      fsync: 'off',
      synchronous_commit: 'on',
      full_page_writes: 'off',
      // In the data directory, so even a SIGKILLed cluster leaves nothing in /dev/shm.
      dynamic_shared_memory_type: 'mmap',
      shared_buffers: "'32MB'",
    };
    const file = path.join(this.dataDir, 'fault-test.conf');
    fs.writeFileSync(
      file,
      Object.entries(settings)
        .map(([name, value]) => `${name} = ${value}\n`)
        .join(''),
    );
    const { uid, gid } = osUser(OS_USER);
    fs.chownSync(file, uid, gid);
  }

  private pgCtl(args: string[]): Promise<void> {
    return this.asPostgres('pg_ctl', ['-D', this.dataDir, ...args]);
  }

  /** initdb and pg_ctl refuse to run as root. */
  private async asPostgres(program: string, args: string[]): Promise<void> {
    try {
      await run('runuser', ['-u', OS_USER, '--', path.join(PG_BIN, program), ...args], {
        cwd: this.dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
        timeout: 90_000,
      });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`${program} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}\n--- server log ---\n${this.log(2_000)}`, { cause: error });
    }
  }

  private get lockFile(): string {
    return path.join(this.dataDir, 'postmaster.pid');
  }

  private lockFilePid(): number | undefined {
    if (!this.dir) return undefined;
    try {
      return Number(fs.readFileSync(this.lockFile, 'utf8').split('\n')[0]) || undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * After a SIGKILL the postmaster, reparented to init, stays a zombie until
   * init reaps it (here PID 1 took up to 2 s), and PostgreSQL refuses to start
   * while the pid in a stale lock file still exists. A zombie holds no port
   * and no shared memory, so its lock files can go.
   */
  private removeLockFilesOfZombie(): void {
    const pid = this.lockFilePid();
    if (pid === undefined || processState(pid) !== 'Z') return;
    fs.rmSync(path.join(this.dir, 'socket', `.s.PGSQL.${this.port}.lock`), { force: true });
    fs.rmSync(this.lockFile, { force: true });
  }

  /** The postmaster's pid from postmaster.pid, if that process is alive and really serves this data directory. */
  private livePostmasterPid(): number | undefined {
    const pid = this.lockFilePid();
    if (pid === undefined || isGone(pid)) return undefined;
    try {
      // After a SIGKILL the pid file stays behind, and its pid may belong to another process by now.
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(this.dataDir) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  private requirePostmaster(action: string): number {
    const pid = this.livePostmasterPid();
    if (pid === undefined || !this.running) throw new Error(`OwnPostgres: cannot ${action}, the server is not running`);
    return pid;
  }

  /**
   * A server that was SIGKILLed and not restarted leaves its SysV shared
   * memory segment behind (a restart would reclaim it); remove it, but only
   * if it is the one named in the stale postmaster.pid and nobody uses it.
   */
  private async removeOrphanedSharedMemory(): Promise<void> {
    let line: string | undefined;
    try {
      line = fs.readFileSync(this.lockFile, 'utf8').split('\n')[6];
    } catch {
      return; // no pid file: the server shut down cleanly
    }
    const [key, shmid] = (line ?? '').trim().split(/\s+/).map(Number);
    if (!shmid) return;
    const segments = fs.readFileSync('/proc/sysvipc/shm', 'utf8').split('\n').slice(1);
    const orphan = segments.some((row) => {
      const fields = row.trim().split(/\s+/).map(Number);
      return fields[0] === key && fields[1] === shmid && fields[6] === 0;
    });
    if (orphan) await run('ipcrm', ['-m', String(shmid)]).catch(() => undefined);
  }

  private armWatchdog(): void {
    const watchdog = spawn('sh', ['-c', WATCHDOG_SCRIPT, 'own-postgres-watchdog', this.dir, this.dataDir, path.join(PG_BIN, 'pg_ctl')], {
      detached: true, // its own process group: a Ctrl-C to Jest does not reach it
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    watchdog.unref();
    (watchdog.stdin as unknown as net.Socket).unref();
    this.watchdog = watchdog;
  }

  private async disarmWatchdog(): Promise<void> {
    const watchdog = this.watchdog;
    if (!watchdog) return;
    this.watchdog = undefined;
    const exited = exitOf(watchdog);
    watchdog.stdin!.end('disarm\n');
    await exited; // it exits as soon as it reads the word
  }
}

function osUser(name: string): { uid: number; gid: number } {
  const entry = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === name);
  if (!entry) throw new Error(`OwnPostgres: no OS user "${name}"`);
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

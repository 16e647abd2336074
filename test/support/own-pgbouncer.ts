import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { exitOf, ExitStatus, freePort, spawnTiedToParent } from './service-process.js';

const PGBOUNCER = process.env.TEST_PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';
/** PgBouncer refuses to run as root: it runs as the cluster's OS user. */
const OS_USER = 'postgres';

export interface PgBouncerOptions {
  /** The PostgreSQL server it pools, on 127.0.0.1. */
  serverPort: number;
  /** Server connections per database and user (`default_pool_size`). */
  poolSize: number;
  /** `pool_mode`; transaction by default. */
  poolMode?: 'session' | 'transaction' | 'statement';
}

/**
 * A PgBouncer of the test's own (Debian's `pgbouncer`), on a free loopback
 * port in front of a test PostgreSQL, with trust auth. `settings` are the
 * exact lines of its `[pgbouncer]` section, for the documentation to quote.
 */
export class OwnPgBouncer {
  port = 0;
  dir = '';
  private child?: ChildProcess;
  private exited?: Promise<ExitStatus>;
  private output = '';

  constructor(private readonly options: PgBouncerOptions) {}

  static available(): boolean {
    return fs.existsSync(PGBOUNCER);
  }

  url(database: string, user = 'postgres'): string {
    return `postgres://${user}@127.0.0.1:${this.port}/${database}`;
  }

  /** The `[pgbouncer]` settings it runs with (paths and ports aside). */
  get settings(): Record<string, string> {
    return {
      pool_mode: this.options.poolMode ?? 'transaction',
      default_pool_size: String(this.options.poolSize),
      min_pool_size: '0',
      reserve_pool_size: '0',
      max_client_conn: '1000',
      server_reset_query: 'DISCARD ALL',
      server_reset_query_always: '0',
      ignore_startup_parameters: 'extra_float_digits',
      auth_type: 'trust',
    };
  }

  log(maxChars = 4_000): string {
    return this.output.slice(-maxChars);
  }

  async start(): Promise<this> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'own-pgbouncer-'));
    fs.chmodSync(this.dir, 0o777);
    this.port = await freePort();
    const userlist = path.join(this.dir, 'userlist.txt');
    fs.writeFileSync(userlist, `"postgres" ""\n`);
    const settings = Object.entries(this.settings).map(([key, value]) => `${key} = ${value}`);
    const ini = path.join(this.dir, 'pgbouncer.ini');
    fs.writeFileSync(
      ini,
      [
        '[databases]',
        `* = host=127.0.0.1 port=${this.options.serverPort}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${this.port}`,
        'unix_socket_dir =',
        `auth_file = ${userlist}`,
        `pidfile = ${path.join(this.dir, 'pgbouncer.pid')}`,
        'admin_users = postgres',
        ...settings,
        '',
      ].join('\n'),
    );
    const { uid, gid } = osUser(OS_USER);
    this.child = spawnTiedToParent(PGBOUNCER, [ini], { cwd: this.dir, uid, gid, stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = exitOf(this.child);
    const ready = new Promise<void>((resolve, reject) => {
      const onOutput = (chunk: Buffer) => {
        this.output += chunk.toString('utf8');
        if (/process up/.test(this.output)) resolve();
      };
      this.child!.stdout!.on('data', onOutput);
      this.child!.stderr!.on('data', onOutput);
      this.child!.once('error', reject);
      void this.exited!.then((status) => reject(new Error(`pgbouncer exited (code ${status.code}, signal ${status.signal}):\n${this.log()}`)));
    });
    await ready;
    return this;
  }

  /** Rows of an admin console command (`SHOW POOLS`, `SHOW STATS`…): the console speaks only the simple query protocol. */
  async admin(command: string): Promise<Array<Record<string, unknown>>> {
    const client = new pg.Client({ connectionString: this.url('pgbouncer') });
    await client.connect();
    try {
      const result = await client.query({ text: command, queryMode: 'simple' } as pg.QueryConfig);
      return result.rows;
    } finally {
      await client.end();
    }
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGINT');
      await this.exited;
    }
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function osUser(name: string): { uid: number; gid: number } {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`no OS user ${name}`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

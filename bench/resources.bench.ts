/**
 * Per-request resource use of each workload, for the capacity model in
 * docs/scaling.md. Two app instances (child processes, so the CPU counted is
 * the service's, not this load generator's) share one throw-away PostgreSQL
 * database and a redis-server of the bench's own (so INFO commandstats counts
 * only the service's commands). Requests are sent one at a time; per request:
 *
 * - PostgreSQL round trips: every pg `Client.query` call in the instances
 *   (TypeORM pool, LangGraph checkpointer pool, maintenance connections),
 *   and how many of them opened a transaction;
 * - PostgreSQL rows read (seq_tup_read + idx_tup_fetch) and written
 *   (n_tup_ins + n_tup_upd + n_tup_del), pg_stat_user_tables deltas;
 * - Redis commands by type (INFO commandstats deltas);
 * - CPU ms of the instances (process.cpuUsage), wall latency p50.
 *
 * The background rate of an idle pair of instances (heartbeats, queue
 * blocking reads, reconciler) is measured first and subtracted.
 *
 * With PGBOUNCER_POOL=<n>, the instances reach PostgreSQL through a
 * PgBouncer of the bench's own in transaction mode with n server connections
 * (Debian's pgbouncer, run as the postgres OS user, as the PgBouncer suite
 * does), DATABASE_DIRECT_URL the server itself; the figures are then what
 * the service costs behind a pooler, and PgBouncer's own counts are added.
 *
 *   npm run bench:resources     (CHAT_TURNS=40, READS=200, SEARCHES=100, INGEST_DOCS=3, DOC_KB=100, PGBOUNCER_POOL unset)
 */
import 'reflect-metadata';
import { ChildProcess, fork } from 'node:child_process';
import { createClient } from '@keyv/redis';
import { JwtService } from '@nestjs/jwt';
import pg from 'pg';
import { OwnPgBouncer } from '../test/support/own-pgbouncer.js';
import { benchConfig, median, runBench, startRedisServer } from './support.js';

const CHAT_TURNS = Number(process.env.CHAT_TURNS ?? 40);
const READS = Number(process.env.READS ?? 200);
const SEARCHES = Number(process.env.SEARCHES ?? 100);
const INGEST_DOCS = Number(process.env.INGEST_DOCS ?? 3);
const DOC_KB = Number(process.env.DOC_KB ?? 100);
const IDLE_MS = Number(process.env.IDLE_MS ?? 10_000);
const PGBOUNCER_POOL = Number(process.env.PGBOUNCER_POOL ?? 0);
const SETUP_SESSIONS = 20;
/** How long table statistics must stay still to count as flushed (PostgreSQL defers an idle backend's flush by up to 10 s). */
const SETTLE_MS = 11_000;

const QUESTIONS = ['How do I reset the Aurora X1 router?', '退货政策是什么？', 'How long is the Aurora X2 warranty?', '积分的有效期是多久？', 'What is the hotel limit in Tokyo?'];
const SEARCH_QUERIES = ['reset router factory settings', '退货 退款 政策', 'warranty period Aurora', '会员积分 有效期', 'travel expense hotel limit', 'password change account'];

// ---------------------------------------------------------------- app instance (child process)

type PgCounters = { roundTrips: number; transactions: number; byStatement: Record<string, number> };
type Snapshot = { cpuMs: number; pg: PgCounters; rssMb: number };

/** A statement's verb and first table, e.g. `INSERT checkpoint_writes`, `SELECT chat_sessions`. */
function statementKind(text: string | undefined): string {
  if (!text) return '?';
  const flat = text.replace(/\s+/g, ' ').trim();
  const verb = /^\w+/.exec(flat)?.[0].toUpperCase() ?? '?';
  const table = /\b(?:FROM|INTO|UPDATE|JOIN)\s+(?:"?\w+"?\.)?"?(\w+)/i.exec(flat)?.[1];
  return table ? `${verb} ${table}` : verb;
}

async function serveInstance(): Promise<void> {
  const counters: PgCounters = { roundTrips: 0, transactions: 0, byStatement: {} };
  // Counted before any pool exists, so every connection the instance opens is covered.
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    counters.roundTrips += 1;
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text && /^\s*(BEGIN|START TRANSACTION)/i.test(text)) counters.transactions += 1;
    const kind = statementKind(text);
    counters.byStatement[kind] = (counters.byStatement[kind] ?? 0) + 1;
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;

  const { NestFactory } = await import('@nestjs/core');
  const { default: pino } = await import('pino');
  const { AppModule } = await import('../src/app.module.js');
  const { setupApp } = await import('../src/setup-app.js');
  const direct = process.env.BENCH_DATABASE_DIRECT_URL;
  const config = benchConfig(process.env.BENCH_DATABASE_URL!, direct ? { DATABASE_DIRECT_URL: direct } : {});
  const app = await NestFactory.create<import('@nestjs/platform-express').NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    logger: ['warn', 'error'],
  });
  setupApp(app, config, pino({ level: 'warn' }));
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  process.on('message', (message: { type: string; id?: number }) => {
    if (message.type === 'snapshot') {
      const cpu = process.cpuUsage();
      const snapshot: Snapshot = { cpuMs: (cpu.user + cpu.system) / 1000, pg: { ...counters, byStatement: { ...counters.byStatement } }, rssMb: process.memoryUsage().rss / 1e6 };
      process.send!({ type: 'snapshot', id: message.id, snapshot });
    } else if (message.type === 'close') {
      void app.close().then(() => process.exit(0));
    }
  });
  process.send!({ type: 'ready', url });
}

class Instance {
  private nextId = 0;
  private readonly waiting = new Map<number, (snapshot: Snapshot) => void>();
  constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (message: { type: string; id: number; snapshot: Snapshot }) => {
      if (message.type === 'snapshot') this.waiting.get(message.id)?.(message.snapshot);
    });
  }

  /** An instance on `databaseUrl` (a pooler's, then `directUrl` is the server's). */
  static start(databaseUrl: string, redisUrl: string, directUrl?: string): Promise<Instance> {
    const child = fork(process.argv[1], [], {
      env: {
        ...process.env,
        RESOURCES_BENCH_ROLE: 'instance',
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_REDIS_URL: redisUrl,
        ...(directUrl ? { BENCH_DATABASE_DIRECT_URL: directUrl } : {}),
      },
    });
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`instance exited (${code}) before it was ready`)));
      child.on('message', (message: { type: string; url?: string }) => {
        if (message.type === 'ready') resolve(new Instance(child, message.url!));
      });
    });
  }

  snapshot(): Promise<Snapshot> {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.waiting.set(id, (snapshot) => {
        this.waiting.delete(id);
        resolve(snapshot);
      });
      this.child.send({ type: 'snapshot', id });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ type: 'close' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------- Redis of the bench's own

// ---------------------------------------------------------------- measuring

/** Commands the bench itself sends to Redis (to read the counters), left out of the counts. */
const OWN_COMMANDS = new Set(['info', 'config', 'memory', 'scan', 'xlen', 'ping', 'dbsize']);

type Totals = {
  cpuMs: number;
  roundTrips: number;
  transactions: number;
  rowsRead: number;
  rowsWritten: number;
  redis: Map<string, number>;
  statements: Map<string, number>;
};

type Row = {
  label: string;
  n: number;
  unit: string;
  p50: number;
  perUnit: { cpuMs: number; roundTrips: number; transactions: number; rowsRead: number; rowsWritten: number; redis: number; redisTop: string };
  /** Most PostgreSQL connections open to the bench database at once during the workload (sampled every 100 ms). */
  peakConnections: number;
  /** Round trips per unit by statement kind, most first. */
  statements: Array<[string, number]>;
  note?: string;
};

class Meter {
  idleRate: Totals | null = null;

  constructor(
    private readonly instances: Instance[],
    private readonly db: pg.Client,
    private readonly redis: { sendCommand(args: string[]): Promise<unknown> },
  ) {}

  private async tableStats(): Promise<{ read: number; written: number }> {
    await this.db.query('SELECT pg_stat_clear_snapshot()');
    const [row] = (
      await this.db.query(
        `SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)::bigint AS read,
                coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint AS written
           FROM pg_stat_user_tables`,
      )
    ).rows as Array<{ read: string; written: string }>;
    return { read: Number(row.read), written: Number(row.written) };
  }

  /**
   * Table statistics once every backend has flushed its own: an idle
   * backend that flushed less than a second ago defers the next flush by
   * PostgreSQL's PGSTAT_IDLE_INTERVAL (10 s), so the figures count once they
   * have not moved for longer than that. This connection's own reads of the
   * tables (the bench's set-up queries) are flushed first.
   */
  private async settledTableStats(): Promise<{ read: number; written: number; at: number }> {
    await this.db.query('SELECT pg_stat_force_next_flush()');
    await this.db.query('SELECT 1');
    let last = await this.tableStats();
    let since = performance.now();
    while (performance.now() - since < SETTLE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const next = await this.tableStats();
      if (next.read !== last.read || next.written !== last.written) since = performance.now();
      last = next;
    }
    return { ...last, at: performance.now() };
  }

  private async commandStats(): Promise<Map<string, number>> {
    const info = String(await this.redis.sendCommand(['INFO', 'commandstats']));
    const calls = new Map<string, number>();
    for (const [, name, n] of info.matchAll(/cmdstat_([\w|-]+):calls=(\d+)/g)) if (!OWN_COMMANDS.has(name)) calls.set(name, Number(n));
    return calls;
  }

  /** The counters that move at once (CPU, round trips, Redis commands). */
  private async instant(): Promise<Omit<Totals, 'rowsRead' | 'rowsWritten'> & { at: number }> {
    const redis = await this.commandStats();
    const snapshots = await Promise.all(this.instances.map((instance) => instance.snapshot()));
    return {
      cpuMs: snapshots.reduce((sum, s) => sum + s.cpuMs, 0),
      roundTrips: snapshots.reduce((sum, s) => sum + s.pg.roundTrips, 0),
      transactions: snapshots.reduce((sum, s) => sum + s.pg.transactions, 0),
      redis,
      statements: sumMaps(snapshots.map((s) => s.pg.byStatement)),
      at: performance.now(),
    };
  }

  /** Counter deltas of `work`, less the idle background over the same time (the settling time too for table statistics). */
  private async window(work: () => Promise<void>): Promise<{ totals: Totals; seconds: number; peakConnections: number }> {
    const tableBefore = await this.settledTableStats();
    const before = await this.instant();
    let peakConnections = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await this.db.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
        peakConnections = Math.max(peakConnections, (rows[0] as { n: number }).n);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await work();
    sampling = false;
    await sampler;
    const after = await this.instant();
    const tableAfter = await this.settledTableStats();
    const seconds = (after.at - before.at) / 1000;
    const tableSeconds = (tableAfter.at - tableBefore.at) / 1000;
    const idle = this.idleRate;
    const minus = (delta: number, rate: number | undefined, s: number) => Math.max(0, delta - (rate ?? 0) * s);
    const redis = new Map<string, number>();
    for (const [name, calls] of after.redis) {
      const n = minus(calls - (before.redis.get(name) ?? 0), idle?.redis.get(name), seconds);
      if (n > 0) redis.set(name, n);
    }
    return {
      seconds,
      peakConnections,
      totals: {
        cpuMs: minus(after.cpuMs - before.cpuMs, idle?.cpuMs, seconds),
        roundTrips: minus(after.roundTrips - before.roundTrips, idle?.roundTrips, seconds),
        transactions: minus(after.transactions - before.transactions, idle?.transactions, seconds),
        rowsRead: minus(tableAfter.read - tableBefore.read, idle?.rowsRead, tableSeconds),
        rowsWritten: minus(tableAfter.written - tableBefore.written, idle?.rowsWritten, tableSeconds),
        redis,
        statements: new Map([...after.statements].map(([kind, n]) => [kind, n - (before.statements.get(kind) ?? 0)] as [string, number]).filter(([, n]) => n > 0)),
      },
    };
  }

  /** The background of the idle instances, per second; subtracted from every later window. */
  async idle(ms: number): Promise<Totals> {
    const { totals, seconds } = await this.window(() => new Promise((resolve) => setTimeout(resolve, ms)));
    // Table statistics moved over the whole window, settling included; close enough for a background rate.
    const rate = (x: number) => x / seconds;
    this.idleRate = {
      cpuMs: rate(totals.cpuMs),
      roundTrips: rate(totals.roundTrips),
      transactions: rate(totals.transactions),
      rowsRead: rate(totals.rowsRead) * (seconds / (seconds + SETTLE_MS / 1000)),
      rowsWritten: rate(totals.rowsWritten) * (seconds / (seconds + SETTLE_MS / 1000)),
      redis: new Map([...totals.redis].map(([name, n]) => [name, rate(n)])),
      statements: totals.statements,
    };
    return this.idleRate;
  }

  /** Runs `request` n times one after the other; figures per request. */
  async measure(label: string, n: number, request: (i: number) => Promise<void>, options: { unit?: string } = {}): Promise<Row> {
    const times: number[] = [];
    const { totals, peakConnections } = await this.window(async () => {
      for (let i = 0; i < n; i += 1) {
        const t = performance.now();
        await request(i);
        times.push(performance.now() - t);
      }
    });
    const top = [...totals.redis.entries()].filter(([, calls]) => calls >= 0.5).sort((x, y) => y[1] - x[1]);
    const per = (x: number) => x / n;
    return {
      label,
      n,
      unit: options.unit ?? 'request',
      p50: median(times),
      peakConnections,
      perUnit: {
        cpuMs: per(totals.cpuMs),
        roundTrips: per(totals.roundTrips),
        transactions: per(totals.transactions),
        rowsRead: per(totals.rowsRead),
        rowsWritten: per(totals.rowsWritten),
        redis: per(top.reduce((sum, [, calls]) => sum + calls, 0)),
        redisTop: top
          .slice(0, 5)
          .map(([name, calls]) => `${name} ${per(calls) < 10 ? per(calls).toFixed(2) : per(calls).toFixed(0)}`)
          .join(', '),
      },
      statements: [...totals.statements.entries()].map(([kind, calls]) => [kind, per(calls)] as [string, number]).sort((x, y) => y[1] - x[1]),
    };
  }
}

function sumMaps(records: Array<Record<string, number>>): Map<string, number> {
  const sum = new Map<string, number>();
  for (const record of records) for (const [key, n] of Object.entries(record)) sum.set(key, (sum.get(key) ?? 0) + n);
  return sum;
}

// ---------------------------------------------------------------- workloads

/** A deterministic mixed English/Chinese text of about `bytes` bytes, different for each seed. */
function documentText(seed: number, bytes: number): string {
  let state = seed * 2654435761;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const words =
    'router firmware warranty reset network signal battery account password invoice refund shipping order member points travel hotel budget policy approval manager device update setting channel backup restore'.split(
      ' ',
    );
  const han = '设备路由器固件保修重置网络信号电池账户密码发票退款配送订单会员积分差旅酒店预算政策审批经理更新设置备份恢复';
  const parts: string[] = [`Document ${seed}\n\n`];
  let size = 0;
  while (size < bytes) {
    const chinese = next() < 0.3;
    let sentence: string;
    if (chinese) {
      const length = 12 + Math.floor(next() * 24);
      sentence = Array.from({ length }, () => han[Math.floor(next() * han.length)]).join('') + '。';
    } else {
      const length = 8 + Math.floor(next() * 12);
      sentence = Array.from({ length }, () => words[Math.floor(next() * words.length)]).join(' ');
      sentence = `${sentence[0].toUpperCase()}${sentence.slice(1)} ${seed}-${Math.floor(next() * 1e6)}. `;
    }
    if (next() < 0.08) sentence += '\n\n';
    parts.push(sentence);
    size += Buffer.byteLength(sentence);
  }
  return parts.join('');
}

async function readToEnd(res: Response): Promise<string> {
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  return res.text();
}

const fmtN = (n: number, digits = 1) => (n >= 100 ? n.toFixed(0) : n.toFixed(digits));

function printTable(rows: Row[]): void {
  console.log('');
  console.log('| workload | n | per | wall p50 | CPU ms | PG round trips (tx) | PG rows read | PG rows written | PG conns (peak) | Redis cmds | Redis commands (top) |');
  console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const row of rows) {
    const u = row.perUnit;
    console.log(
      `| ${row.label} | ${row.n} | ${row.unit} | ${row.p50.toFixed(1)} ms | ${fmtN(u.cpuMs)} | ${fmtN(u.roundTrips)} (${fmtN(u.transactions)}) | ${fmtN(u.rowsRead)} | ${fmtN(u.rowsWritten)} | ${row.peakConnections} | ${fmtN(u.redis)} | ${u.redisTop || '–'} |`,
    );
  }
  for (const row of rows) if (row.note) console.log(`- ${row.label}: ${row.note}`);
  console.log('\nPostgreSQL round trips per unit by statement (verb and first table):');
  for (const row of rows) {
    console.log(
      `- ${row.label}: ${row.statements
        .slice(0, 10)
        .map(([kind, n]) => `${kind} ${n.toFixed(n < 10 ? 2 : 0)}`)
        .join(', ')}`,
    );
  }
}

async function main(): Promise<void> {
  const redisServer = await startRedisServer();
  // Also when the bench fails before its closers are registered.
  process.on('exit', () => redisServer.stop());
  runBench('bench_scaling', async (databaseUrl, onClose) => {
    onClose(async () => redisServer.stop());
    const config = benchConfig(databaseUrl);
    let serviceUrl = databaseUrl;
    let pooler: OwnPgBouncer | undefined;
    if (PGBOUNCER_POOL > 0) {
      const server = new URL(databaseUrl);
      pooler = await new OwnPgBouncer({ serverPort: Number(server.port || 5432), poolSize: PGBOUNCER_POOL }).start();
      onClose(() => pooler!.stop());
      serviceUrl = pooler.url(server.pathname.slice(1), decodeURIComponent(server.username) || 'postgres');
      console.log(
        `through PgBouncer ${pooler.port}: ${Object.entries(pooler.settings)
          .map(([key, value]) => `${key} = ${value}`)
          .join(', ')}`,
      );
    }
    const a = await Instance.start(serviceUrl, redisServer.url, pooler ? databaseUrl : undefined);
    onClose(() => a.stop());
    const b = await Instance.start(serviceUrl, redisServer.url, pooler ? databaseUrl : undefined);
    onClose(() => b.stop());
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    onClose(() => db.end());
    const redis = createClient({ url: redisServer.url });
    await redis.connect();
    onClose(() => redis.quit());
    const meter = new Meter([a, b], db, redis);

    const token = new JwtService({ secret: config.auth.jwtSecret }).sign({ sub: 'bench-user', role: 'admin' }, { expiresIn: '1h' });
    const auth = { Authorization: `Bearer ${token}` };
    const json = { ...auth, 'Content-Type': 'application/json' };
    const chat = async (base: string, message: string, session?: string) => {
      const res = await fetch(`${base}/api/chat`, { method: 'POST', headers: json, body: JSON.stringify({ message, ...(session ? { session_id: session } : {}) }) });
      const body = (await res.json()) as { session_id: string };
      if (res.status !== 200) throw new Error(`chat: HTTP ${res.status} ${JSON.stringify(body)}`);
      return body.session_id;
    };

    // Set-up (also the warm-up of JIT, pools and caches): sessions of the user, on both instances.
    let chatSession = '';
    for (let i = 0; i < SETUP_SESSIONS; i += 1) chatSession = await chat(i % 2 ? b.url : a.url, QUESTIONS[i % QUESTIONS.length]);
    for (let i = 0; i < 5; i += 1) await chat(a.url, QUESTIONS[i % QUESTIONS.length], chatSession);
    const streamSession = await chat(a.url, QUESTIONS[0]);
    await fetch(`${a.url}/api/sessions`, { headers: auth });
    await fetch(`${b.url}/api/sessions`, { headers: auth });
    const probe = (await (await fetch(`${a.url}/api/knowledge/search`, { method: 'POST', headers: json, body: JSON.stringify({ query: SEARCH_QUERIES[0] }) })).json()) as {
      rag_trace?: { pipeline_id?: string };
    };
    const [kb] = (await db.query('SELECT count(*) FILTER (WHERE is_leaf)::int AS leaves, count(*)::int AS chunks FROM knowledge_chunks')).rows as Array<{
      leaves: number;
      chunks: number;
    }>;
    console.log(
      `2 instances (child processes), own redis-server, PostgreSQL ${databaseUrl.replace(/\/[^/]*$/, '')}; knowledge base: ${kb.leaves} leaves (${kb.chunks} chunks), searches answered by ${probe.rag_trace?.pipeline_id ?? '?'}`,
    );

    const idle = await meter.idle(IDLE_MS);
    const idleCommands = [...idle.redis.entries()].filter(([, r]) => r > 0.01).sort((x, y) => y[1] - x[1]);
    console.log(
      `background of the 2 idle instances, per second: CPU ${idle.cpuMs.toFixed(1)} ms, PG round trips ${idle.roundTrips.toFixed(2)}, ` +
        `Redis ${idleCommands.reduce((s, [, r]) => s + r, 0).toFixed(2)} (${idleCommands.map(([n, r]) => `${n} ${r.toFixed(2)}`).join(', ') || 'none'}) — subtracted below`,
    );

    const rows: Row[] = [];
    const bytesOf = async (session: string) =>
      Number(((await db.query('SELECT coalesce(sum(pg_column_size(m.*)), 0)::bigint AS b FROM chat_messages m WHERE session_id = $1', [session])).rows[0] as { b: string }).b);

    // (1) sync turns on an existing session, alternating instances (no stickiness)
    const chatBytesBefore = await bytesOf(chatSession);
    rows.push(
      await meter.measure('(1) POST /api/chat, existing session', CHAT_TURNS, async (i) => void (await chat(i % 2 ? b.url : a.url, QUESTIONS[i % QUESTIONS.length], chatSession)), {
        unit: 'turn',
      }),
    );
    const chatBytes = ((await bytesOf(chatSession)) - chatBytesBefore) / CHAT_TURNS;

    // (2) streamed turns on an existing session
    const runIds: string[] = [];
    let eventsPerRun = 0;
    rows.push(
      await meter.measure(
        '(2) POST /api/chat/stream, existing session',
        CHAT_TURNS,
        async (i) => {
          const res = await fetch(`${(i % 2 ? b : a).url}/api/chat/stream`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length], session_id: streamSession }),
          });
          const text = await readToEnd(res);
          const runId = /"run_id":"([^"]+)"/.exec(text)?.[1];
          if (!runId || !text.includes('event: done')) throw new Error(`stream without run id or done: ${text.slice(0, 300)}`);
          runIds.push(runId);
          eventsPerRun += (text.match(/^event: /gm) ?? []).length / CHAT_TURNS;
        },
        { unit: 'turn' },
      ),
    );
    let streamBytes = 0;
    let streamEntries = 0;
    for (const runId of runIds) {
      streamBytes += Number(await redis.sendCommand(['MEMORY', 'USAGE', `chat_run_events:${runId}`, 'SAMPLES', '0']));
      streamEntries += Number(await redis.sendCommand(['XLEN', `chat_run_events:${runId}`]));
    }
    rows[rows.length - 1].note =
      `${eventsPerRun.toFixed(1)} SSE events per turn; its Redis stream (chat_run_events:<run_id>): ${(streamEntries / runIds.length).toFixed(1)} entries, ` +
      `${(streamBytes / runIds.length / 1024).toFixed(1)} KiB (MEMORY USAGE), kept RUN_EVENTS_TTL_SECONDS`;
    rows[0].note = `${(chatBytes / 1024).toFixed(2)} KiB of chat_messages rows (pg_column_size, TOAST-compressed) per turn`;

    // (3) the session list, cached; (4) a transcript, cached
    const [{ count: sessions }] = (await db.query('SELECT count(*)::int AS count FROM chat_sessions WHERE user_id = $1', ['bench-user'])).rows as Array<{ count: number }>;
    rows.push(
      await meter.measure(
        `(3) GET /api/sessions (${sessions} sessions, cached)`,
        READS,
        async (i) => void (await readToEnd(await fetch(`${(i % 2 ? b : a).url}/api/sessions`, { headers: auth }))),
      ),
    );
    const [{ count: messages }] = (await db.query('SELECT count(*)::int AS count FROM chat_messages WHERE session_id = $1', [chatSession])).rows as Array<{ count: number }>;
    rows.push(
      await meter.measure(
        `(4) GET /api/sessions/:id/messages (${messages} messages, cached)`,
        READS,
        async (i) => void (await readToEnd(await fetch(`${(i % 2 ? b : a).url}/api/sessions/${chatSession}/messages`, { headers: auth }))),
      ),
    );

    // (5) knowledge search
    rows.push(
      await meter.measure(`(5) POST /api/knowledge/search (${kb.leaves} leaves)`, SEARCHES, async (i) => {
        const res = await fetch(`${(i % 2 ? b : a).url}/api/knowledge/search`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ query: SEARCH_QUERIES[i % SEARCH_QUERIES.length] }),
        });
        if (res.status !== 200 && res.status !== 201) throw new Error(`search: HTTP ${res.status} ${await res.text()}`);
        await res.text();
      }),
    );

    // (6) ingest jobs of ~DOC_KB KB text documents, per 1 000 leaves
    const sizeOf = async () =>
      Number(
        (
          (
            await db.query(
              `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS b FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname LIKE 'knowledge_%'`,
            )
          ).rows[0] as { b: string }
        ).b,
      );
    const leavesNow = async () => ((await db.query('SELECT count(*)::int AS n FROM knowledge_chunks WHERE is_leaf')).rows[0] as { n: number }).n;
    const leavesBefore = await leavesNow();
    const bytesBefore = await sizeOf();
    let uploaded = 0;
    const ingest = await meter.measure(`(6) ingest job, ${DOC_KB} KB text (upload + worker)`, INGEST_DOCS, async (i) => {
      const text = documentText(i + 1, DOC_KB * 1000);
      uploaded += Buffer.byteLength(text);
      const form = new FormData();
      form.append('file', new Blob([text], { type: 'text/plain' }), `scaling-${i + 1}.txt`);
      const res = await fetch(`${a.url}/api/knowledge/documents?wait=true`, { method: 'POST', headers: auth, body: form });
      if (res.status !== 201) throw new Error(`ingest: HTTP ${res.status} ${await res.text()}`);
      await res.text();
    });
    rows.push(ingest);
    const added = (await leavesNow()) - leavesBefore;
    const bytesAdded = (await sizeOf()) - bytesBefore;
    // measure() gave figures per document: per 1 000 leaves instead.
    const perDocument = ingest.perUnit;
    const scale = (x: number) => (x * INGEST_DOCS) / (added / 1000);
    ingest.unit = '1 000 leaves';
    ingest.perUnit = {
      ...perDocument,
      cpuMs: scale(perDocument.cpuMs),
      roundTrips: scale(perDocument.roundTrips),
      transactions: scale(perDocument.transactions),
      rowsRead: scale(perDocument.rowsRead),
      rowsWritten: scale(perDocument.rowsWritten),
      redis: scale(perDocument.redis),
      redisTop: `per document: ${perDocument.redisTop}`,
    };
    ingest.statements = ingest.statements.map(([kind, n]) => [kind, scale(n)]);
    const indexes = (
      await db.query(
        `SELECT indexname, pg_relation_size(indexname::regclass)::bigint AS bytes FROM pg_indexes
          WHERE tablename = 'knowledge_chunks' AND (indexname LIKE 'idx_knowledge_chunks_hnsw_%' OR indexdef ILIKE '%USING gin%')`,
      )
    ).rows as Array<{ indexname: string; bytes: string }>;
    const totalLeaves = await leavesNow();
    ingest.note =
      `${INGEST_DOCS} documents, ${(uploaded / INGEST_DOCS / 1000).toFixed(0)} KB each, ${(added / INGEST_DOCS).toFixed(0)} leaves each (wall p50 is per document); ` +
      `knowledge_* tables grew ${(((bytesAdded / added) * 1000) / 1e6).toFixed(2)} MB per 1 000 leaves (pg_total_relation_size, indexes and TOAST included; the job row keeps the upload); ` +
      `at ${totalLeaves} leaves: ` +
      indexes.map((index) => `${index.indexname} ${(Number(index.bytes) / totalLeaves) | 0} B/leaf`).join(', ');

    // (7) rejoining finished runs from the other instance: replay from the Redis stream
    const rejoins = Math.min(runIds.length, CHAT_TURNS);
    rows.push(
      await meter.measure('(7) GET /api/chat/runs/:id/stream, finished run, other instance', rejoins, async (i) => {
        // Runs i even were started on a, odd on b: rejoin each on the other one, which has no copy in process.
        const other = i % 2 ? a : b;
        const text = await readToEnd(await fetch(`${other.url}/api/chat/runs/${runIds[i]}/stream`, { headers: { ...auth, 'Last-Event-ID': '0' } }));
        if (!text.includes('event: done')) throw new Error(`rejoin without done: ${text.slice(0, 300)}`);
      }),
    );

    printTable(rows);
    const [{ connections }] = (await db.query('SELECT count(*)::int - 1 AS connections FROM pg_stat_activity WHERE datname = current_database()')).rows as Array<{
      connections: number;
    }>;
    const clients = /connected_clients:(\d+)/.exec(String(await redis.sendCommand(['INFO', 'clients'])))?.[1];
    const memory = /used_memory:(\d+)/.exec(String(await redis.sendCommand(['INFO', 'memory'])))?.[1];
    const snapshots = await Promise.all([a.snapshot(), b.snapshot()]);
    console.log(
      `\nafter the run: ${connections} PostgreSQL connections open from the 2 instances (DATABASE_POOL_SIZE ${config.database.poolSize}), ` +
        `${Number(clients) - 1} Redis connections, Redis used_memory ${(Number(memory) / 1e6).toFixed(1)} MB, instance RSS ${snapshots.map((s) => `${s.rssMb.toFixed(0)} MB`).join(' / ')}`,
    );
  });
}

if (process.env.RESOURCES_BENCH_ROLE === 'instance') {
  serveInstance().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  void main();
}

/**
 * Requests per second of GET /api/sessions with a warm cache, against a bare
 * route of the same app (same middleware, guard, pipes and filter; returns a
 * constant), both driven by autocannon in this process.
 *
 *   npm run bench:sessions          (DURATION=8 seconds per run, CONNECTIONS=10)
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import { NestExpressApplication } from '@nestjs/platform-express';
import autocannon from 'autocannon';
import pino from 'pino';
import { AppModule } from '../src/app.module.js';
import { DataSource } from 'typeorm';
import { transactionKnowingCommit } from '../src/database/commit-outcome.js';
import { SessionWrites } from '../src/session/session-writes.service.js';
import { setupApp } from '../src/setup-app.js';
import { benchConfig, runBench } from './support.js';

const DURATION = Number(process.env.DURATION ?? 8);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);

@Controller('api/bench')
class BareController {
  @Get('bare')
  bare() {
    return { ok: true };
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

async function run(url: string, headers: Record<string, string>): Promise<autocannon.Result> {
  return autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION });
}

runBench('bench_sessions', async (databaseUrl, onClose) => {
  const config = benchConfig(databaseUrl);
  const root = pino({ level: 'warn' });
  const app = await NestFactory.create<NestExpressApplication>(
    { module: class BenchApp {}, imports: [AppModule.forRoot(config), BareModule] },
    { bodyParser: false, logger: ['warn', 'error'] },
  );
  setupApp(app, config, root);
  onClose(() => app.close());
  await app.listen(0, '127.0.0.1');
  const base = await app.getUrl();
  {
    const dataSource = app.get(DataSource);
    const writes = app.get(SessionWrites);
    const user = `bench-${Date.now()}`;
    for (let i = 0; i < 20; i += 1) {
      const sessionId = randomUUID();
      await transactionKnowingCommit(dataSource, (manager) =>
        writes.appendTurn(manager, user, sessionId, [
          { type: 'human', content: `会话 ${i}: what is the return policy?` },
          { type: 'ai', content: 'Thirty days.' },
        ]),
      );
    }
    const token = new JwtService({ secret: config.auth.jwtSecret }).sign({ sub: user }, { expiresIn: '1h' });
    const headers = { Authorization: `Bearer ${token}` };
    // Warm the cache and the JIT.
    await autocannon({ url: `${base}/api/sessions`, headers, connections: 2, amount: 200 });
    await autocannon({ url: `${base}/api/bench/bare`, headers, connections: 2, amount: 200 });

    const bare = await run(`${base}/api/bench/bare`, headers);
    const sessions = await run(`${base}/api/sessions`, headers);
    const line = (label: string, r: autocannon.Result) =>
      `${label.padEnd(36)} ${r.requests.average.toFixed(0).padStart(7)} req/s   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms   non-2xx ${r.non2xx}`;
    console.log(`${CONNECTIONS} connections, ${DURATION} s each, 20 sessions for the user`);
    console.log(line('bare route (same app, same guard)', bare));
    console.log(line('GET /api/sessions (warm cache)', sessions));
    console.log(`ratio sessions/bare: ${(sessions.requests.average / bare.requests.average).toFixed(2)}`);
  }
});

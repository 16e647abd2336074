import { Injectable, Module } from '@nestjs/common';
import { tool, ToolRuntime } from '@langchain/core/tools';
import request from 'supertest';
import { z } from 'zod';
import { AgentTool, AgentToolPlugin } from '../src/agent/tools/agent-tool.js';
import type { AgentRunContext } from '../src/agent/turn-context.js';
import { CodedError } from '../src/common/coded-error.js';
import type { LocalToolRouting } from '../src/models/local-tool-routing.js';
import { readSse } from './support/sse-client.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';

/**
 * The promises of the extension architecture, as a hostile reviewer checked
 * them: turns isolated inside the one compiled graph, a tool's internal
 * failure text kept from the client, a tool's coded error answering with its
 * code, a paused task resumed across rounds.
 */

// A gate both turns must reach before either goes on: the two runs are inside the shared, compiled graph at once.
let arrivals: Array<() => void> = [];
let expected = 2;
function gate(): Promise<void> {
  return new Promise((resolve) => {
    arrivals.push(resolve);
    if (arrivals.length >= expected) {
      for (const release of arrivals) release();
      arrivals = [];
    }
  });
}

@AgentTool()
@Injectable()
class GateProbeTool implements AgentToolPlugin {
  readonly name = 'gate_probe';
  readonly promptRules = ['- gate_probe is a test tool.'];
  readonly localRouting: LocalToolRouting = {
    priority: 50,
    capability: { en: 'probe', zh: '探针' },
    route: (message) => (message.startsWith('gate probe') ? { call: { tag: message } } : null),
    compose: (_q, output) => `probe: ${output}`,
  };
  create() {
    return tool(
      async ({ tag }: { tag: string }, runtime: ToolRuntime<unknown, AgentRunContext>) => {
        const { turn } = runtime.context;
        const step = turn.stepReporter(runtime.writer);
        step('probe_before', `before ${turn.userId}`, { user: turn.userId });
        await gate();
        step('probe_after', `after ${turn.userId}`, { user: turn.userId });
        return `${turn.userId}|${turn.sessionId}|${tag}`;
      },
      { name: this.name, description: 'test', schema: z.object({ tag: z.string() }) },
    );
  }
}

/** A tool whose dependency fails with a driver-like message (say a pg error that is not an outage, or a library's 401). */
@AgentTool()
@Injectable()
class LeakyTool implements AgentToolPlugin {
  readonly name = 'leaky_lookup';
  readonly promptRules = ['- leaky_lookup is a test tool.'];
  readonly localRouting: LocalToolRouting = {
    priority: 50,
    capability: { en: 'leak', zh: '泄露' },
    route: (message) => (message.startsWith('leaky lookup') ? { call: { q: message } } : null),
    compose: (_q, output) => output,
  };
  create() {
    return tool(
      async () => {
        throw new Error('password authentication failed for user "rag_admin" at 10.1.2.3:5432 (SECRET-DRIVER-TEXT)');
      },
      { name: this.name, description: 'test', schema: z.object({ q: z.string() }) },
    );
  }
}

class ThingNotFoundError extends CodedError {
  readonly code = 'not_found';
  constructor() {
    super('Thing not found');
  }
}

/** A tool that throws a CodedError of the table, as docs/extending.md says fails the turn "with its code". */
@AgentTool()
@Injectable()
class CodedTool implements AgentToolPlugin {
  readonly name = 'coded_lookup';
  readonly promptRules = ['- coded_lookup is a test tool.'];
  readonly localRouting: LocalToolRouting = {
    priority: 50,
    capability: { en: 'coded', zh: '编码' },
    route: (message) => (message.startsWith('coded lookup') ? { call: { q: message } } : null),
    compose: (_q, output) => output,
  };
  create() {
    return tool(
      async () => {
        throw new ThingNotFoundError();
      },
      { name: this.name, description: 'test', schema: z.object({ q: z.string() }) },
    );
  }
}

@Module({ providers: [GateProbeTool, LeakyTool, CodedTool] })
class ReviewToolsModule {}

describe('turns inside the shared agent graph', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({}, undefined, [ReviewToolsModule]);
    base = await t.listen();
  });
  afterAll(() => t.close());

  const stream = (user: string, message: string, sessionId?: string) =>
    readSse(`${base}/api/chat/stream`, {
      method: 'POST',
      headers: { ...t.auth(user), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message, ...(sessionId ? { session_id: sessionId } : {}) }),
    });

  it('two concurrent streamed turns inside the shared graph each see only their own turn, steps and tokens', async () => {
    expected = 2;
    const alice = uniqueUser('alice');
    const bob = uniqueUser('bob');
    const [a, b] = await Promise.all([stream(alice, 'gate probe from alice'), stream(bob, 'gate probe from bob')]);
    for (const [user, s, tag] of [
      [alice, a, 'gate probe from alice'],
      [bob, b, 'gate probe from bob'],
    ] as const) {
      const sessionId = s.events[0].data.session_id;
      const steps = s.events.filter((e) => e.event === 'step');
      expect(steps.map((e) => e.data.user)).toEqual([user, user]);
      const done = s.events.at(-1)!;
      expect(done.event).toBe('done');
      expect(done.data.response).toBe(`probe: ${user}|${sessionId}|${tag}`);
      const tokens = s.events
        .filter((e) => e.event === 'token')
        .map((e) => e.data.text)
        .join('');
      expect(tokens).toBe(done.data.response);
    }
  });

  it('two concurrent knowledge turns keep their own traces', async () => {
    const alice = uniqueUser('ka');
    const bob = uniqueUser('kb');
    const [a, b] = await Promise.all([stream(alice, 'How do I reset the Aurora X1 router?'), stream(bob, '退货政策是什么？')]);
    expect(a.events.find((e) => e.event === 'trace')!.data.query).toBe('How do I reset the Aurora X1 router?');
    expect(b.events.find((e) => e.event === 'trace')!.data.query).toBe('退货政策是什么？');
  });

  it('keeps a tool’s internal failure text from the client: the tool event says it failed, the answer too', async () => {
    const s = await stream(uniqueUser('leak'), 'leaky lookup please');
    expect(s.events.at(-1)!.event).toBe('done');
    expect(s.raw).not.toContain('SECRET-DRIVER-TEXT');
    expect(s.events.filter((e) => e.event === 'tool').map((e) => [e.data.phase, e.data.summary])).toEqual([
      ['start', { args: { q: 'leaky lookup please' } }],
      ['end', { failed: true }],
    ]);
    expect(s.events.at(-1)!.data.response).toBe('The leaky_lookup tool failed.');
  });

  it('fails the turn with the code of a coded error a tool throws (docs/extending.md)', async () => {
    const res = await request(t.app.getHttpServer())
      .post('/api/chat')
      .set(t.auth(uniqueUser('coded')))
      .send({ message: 'coded lookup x' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found', message: expect.stringMatching(/^Thing not found\. Your message was saved/) });
  });

  it('a paused task resumes across two clarification rounds, then answers and stops waiting', async () => {
    const user = uniqueUser('rounds');
    const http = t.app.getHttpServer();
    const first = await request(http).post('/api/chat').set(t.auth(user)).send({ message: 'How long is the Aurora warranty?' }).expect(200);
    expect(first.body.pending_hitl).not.toBeNull();
    const session = first.body.session_id;
    const taskId = first.body.pending_hitl.task_id;
    // An answer that does not tell the two apart: the run asks again (round 2) under the same task.
    const second = await request(http).post('/api/chat').set(t.auth(user)).send({ message: 'the warranty', session_id: session }).expect(200);
    expect(second.body.pending_hitl).toMatchObject({ task_id: taskId, user_supplement: 'the warranty' });
    const third = await request(http).post('/api/chat').set(t.auth(user)).send({ message: 'X2', session_id: session }).expect(200);
    expect(third.body.pending_hitl).toBeNull();
    expect(third.body.rag_trace).toMatchObject({ hitl_resumed: true, user_supplement: 'the warranty / X2' });
    const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1', [taskId]);
    expect(n).toBe(0);
    // The next message is an ordinary turn.
    const fourth = await request(http).post('/api/chat').set(t.auth(user)).send({ message: 'How do I reset the Aurora X1 router?', session_id: session }).expect(200);
    expect(fourth.body.rag_trace.hitl_resumed ?? false).toBe(false);
  });
});

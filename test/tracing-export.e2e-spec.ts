import { adminBearer } from './support/admin.js';
import { OtlpReceiver, ReceivedSpan } from './support/otlp-receiver.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { parseSse } from './support/sse-client.js';
import { testDatabaseUrl } from './support/test-env.js';

/**
 * The built service (`node dist/main.js`, nothing else on its command line)
 * with tracing turned on by OTEL_EXPORTER_OTLP_ENDPOINT, exporting OTLP/HTTP
 * JSON to a receiver in this test: one streamed knowledge turn is one trace,
 * from the HTTP server span (with its route) through the turn, the model and
 * tool calls and the retrieval stages to PostgreSQL and Redis; its log
 * lines and its response name the same trace.
 */

const OTLP_SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

describe('Tracing exported over OTLP/HTTP by the built service', () => {
  const receiver = new OtlpReceiver();
  let service: ServiceProcess;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    service = await startService(
      {
        DATABASE_URL: testDatabaseUrl(),
        WEB_CLIENT_ENABLED: 'false',
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '20',
      },
      { startupTimeoutMs: 60_000 },
    );
  });
  afterAll(async () => {
    expect((await service?.stop())?.code).toBe(0);
    await receiver.close();
  });

  it('a streamed knowledge turn: one trace from the HTTP span down to pg and Redis; the log lines and the response carry its id', async () => {
    // A probe first: not traced.
    expect((await fetch(`${service.baseUrl}/health`)).status).toBe(200);

    const response = await fetch(`${service.baseUrl}/api/chat/stream`, {
      method: 'POST',
      headers: { ...adminBearer(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'How do I reset the Aurora X1 router to factory settings?' }),
    });
    expect(response.status).toBe(200);
    const traceparent = response.headers.get('traceparent') ?? '';
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const traceId = traceparent.split('-')[1];
    const requestId = response.headers.get('x-request-id');
    const { events } = parseSse(await response.text());
    expect(events.at(-1)?.event).toBe('done');
    expect(events[0]).toMatchObject({ event: 'metadata', data: { trace_id: traceId } });

    const ofTrace = (spans: ReceivedSpan[]) => spans.filter((span) => span.traceId === traceId);
    const serverSpanOf = (spans: ReceivedSpan[]) => ofTrace(spans).find((span) => span.scope === '@opentelemetry/instrumentation-http' && span.kind === OTLP_SPAN_KIND.SERVER);
    const expected = [
      'invoke_agent agent',
      'chat local',
      'execute_tool knowledge_search',
      'retrieval_stage recall',
      'retrieval_stage full_text',
      'retrieval_stage dense',
      'retrieval_stage auto_merge',
      'retrieval_stage rerank',
      'retrieval_stage threshold',
      'retrieval_stage grade',
      'embeddings local-hash-1',
    ];
    // The events written while the turn ran are tallied on its span, those after it (the last) in spans of their own.
    const eventsWritten = (spans: ReceivedSpan[]) =>
      spans
        .filter((span) => span.name === 'run_events write' || span.name === 'invoke_agent agent')
        .reduce((sum, span) => sum + Number(span.attributes['rag.run_events.count'] ?? 0), 0);
    // Batches may arrive in any order: wait until every span this test looks at has come (the HTTP span ends with the
    // response, the turn's once it is stored and cleaned up; the last chat span once its tokens are counted), every
    // span's parent with it.
    /** What the spans received so far still lack (empty: everything the test looks at is there). */
    const lacking = (all: ReceivedSpan[]): string[] => {
      const traced = ofTrace(all);
      const ids = new Set(traced.map((span) => span.spanId));
      return [
        ...(serverSpanOf(all) ? [] : ['the HTTP server span']),
        ...expected.filter((name) => !traced.some((span) => span.name === name)),
        ...(traced.filter((span) => span.name === 'chat local').length === 2 ? [] : ['the second chat span']),
        ...(traced.some((span) => span.attributes['db.system.name'] === 'postgresql') ? [] : ['a pg span']),
        ...(traced.some((span) => span.attributes['db.system.name'] === 'redis') ? [] : ['a redis span']),
        // At least: a batch retried (its reply late) writes its events again.
        ...(eventsWritten(traced) >= events.length ? [] : [`the turn's tally and run_events write spans for ${events.length} events (${eventsWritten(traced)})`]),
        ...traced.filter((span) => span.parentSpanId && !ids.has(span.parentSpanId)).map((span) => `the parent of ${span.name}`),
      ];
    };
    let lastLacking: string[] = [];
    const spans = await receiver
      .waitFor((all) => {
        lastLacking = lacking(all);
        return lastLacking.length === 0 && ofTrace(all);
      }, 'every span of the turn')
      .catch((error: Error) => {
        throw new Error(`${error.message}\nlacking: ${lastLacking.join('; ')}`);
      });
    const server = serverSpanOf(spans)!;
    expect(server.parentSpanId).toBeUndefined();
    expect(server.attributes).toMatchObject({ 'http.route': '/api/chat/stream', 'http.request.method': 'POST', 'http.response.status_code': 200 });

    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const underServer = (span: ReceivedSpan) => {
      for (let at: ReceivedSpan | undefined = span; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) if (at === server) return true;
      return false;
    };
    const named = (name: string) => spans.filter((span) => span.name === name);
    for (const name of expected) {
      expect({ name, found: named(name).length > 0, underServer: named(name).every(underServer) }).toEqual({ name, found: true, underServer: true });
    }
    const turn = named('invoke_agent agent')[0];
    expect(turn.attributes).toMatchObject({ 'gen_ai.conversation.id': events[0].data.session_id, 'rag.run.id': events[0].data.run_id });
    expect(named('chat local')[0]).toMatchObject({ kind: OTLP_SPAN_KIND.CLIENT, attributes: { 'gen_ai.provider.name': 'local', 'gen_ai.request.model': 'local' } });
    expect(spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'retrieval').every(underServer)).toBe(true);

    const postgres = spans.filter((span) => span.attributes['db.system.name'] === 'postgresql');
    const redis = spans.filter((span) => span.attributes['db.system.name'] === 'redis');
    expect(postgres.length).toBeGreaterThan(0);
    expect(redis.length).toBeGreaterThan(0);
    expect([...postgres, ...redis].every(underServer)).toBe(true);
    // The turn's own statements; its events written to Redis a batch (one MULTI) per span, not a span per event.
    expect(postgres.some((span) => String(span.attributes['db.query.text']).startsWith('INSERT'))).toBe(true);
    // Transaction control is not recorded (the statements between are); a turn runs several transactions.
    expect(postgres.filter((span) => /^(START|BEGIN|COMMIT|SET|SAVEPOINT|RELEASE)\b/i.test(String(span.attributes['db.query.text']))).map((span) => span.name)).toEqual([]);
    // Express names the route (above) and makes no spans of its own.
    expect(spans.filter((span) => span.scope.includes('express')).map((span) => span.name)).toEqual([]);
    expect(named('run_events write').every(underServer)).toBe(true);
    expect(turn.attributes['rag.run_events.batches']).toBeGreaterThan(0);
    expect(eventsWritten(spans)).toBeGreaterThanOrEqual(events.length);
    expect(redis.filter((span) => String(span.attributes['db.query.text']).startsWith('XADD'))).toEqual([]);
    // The checkpointer's writes during the turn: counted and timed on its span, no statement on its tables traced.
    expect(turn.attributes['rag.checkpoint.operations']).toBeGreaterThan(0);
    expect(turn.attributes['rag.checkpoint.duration_ms']).toBeGreaterThan(0);
    expect(named('checkpoint put')).toEqual([]);
    expect(postgres.filter((span) => /\bcheckpoint(s|_writes|_blobs)\b/.test(String(span.attributes['db.query.text']))).map((span) => span.name)).toEqual([]);

    expect(receiver.spans.filter((span) => String(span.attributes['url.path'] ?? '').startsWith('/health'))).toEqual([]);
    expect(receiver.refused).toEqual([]);

    // Every log line of the request carries its trace, the line of its completion included.
    await service.waitForLog((_line, entry) => (entry?.req as { id?: string } | undefined)?.id === requestId && entry?.msg === 'request completed');
    const requestLines = service
      .lines()
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.request_id === requestId || (entry.req as { id?: string } | undefined)?.id === requestId);
    expect(requestLines.length).toBeGreaterThan(0);
    expect(requestLines.filter((entry) => entry.trace_id !== traceId || !/^[0-9a-f]{16}$/.test(String(entry.span_id)))).toEqual([]);
  });
});

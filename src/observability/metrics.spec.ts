import { Metrics } from './metrics.js';

/** The value of the sample line `name{labels}` (labels as printed), or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('Metrics', () => {
  it('keeps the process metrics but not the gauges prom-client names like counters', async () => {
    const text = await new Metrics().exposition();
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    // Declared, whatever its samples: a process with no handle of any type (a Jest worker, at times) has none.
    expect(text).toMatch(/^# TYPE nodejs_active_handles gauge$/m);
    expect(text).not.toMatch(/nodejs_active_(handles|requests|resources)_total/);
  });

  it('answers a scrape when a gauge fails to read, at once or later', async () => {
    const metrics = new Metrics();
    metrics.gauge('test_throws_at_once', 'test', [], () => {
      throw new Error('no connection');
    });
    metrics.gauge('test_rejects', 'test', [], () => Promise.reject(new Error('no connection')));
    const text = await metrics.exposition();
    expect(text).toMatch(/^# HELP test_throws_at_once test$/m);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });

  it('gives each app its own counters', async () => {
    const [one, other] = [new Metrics(), new Metrics()];
    one.rateLimitRefused('chat', 'user');
    expect(sample(await one.exposition(), 'rate_limit_refusals_total{bucket="chat",spent_by="user"}')).toBe(1);
    expect(sample(await other.exposition(), 'rate_limit_refusals_total{bucket="chat",spent_by="user"}')).toBeUndefined();
  });

  it('counts a turn once, by outcome, and its first token once', async () => {
    const metrics = new Metrics();
    const turn = metrics.startTurn();
    expect(sample(await metrics.exposition(), 'chat_runs_in_flight')).toBe(1);
    for (const type of ['metadata', 'token', 'token']) turn.sawEvent(type);
    turn.end('failed', 'model_timeout');
    turn.end('success');
    const text = await metrics.exposition();
    expect(sample(text, 'chat_runs_in_flight')).toBe(0);
    expect(sample(text, 'chat_turn_duration_seconds_count{outcome="failed",error_type="model_timeout"}')).toBe(1);
    expect(sample(text, 'chat_turn_duration_seconds_count{outcome="success",error_type=""}')).toBeUndefined();
    expect(sample(text, 'chat_turn_time_to_first_token_seconds_count')).toBe(1);
  });

  it('times a model call that fails by its error type, and records the tokens of one that answers', async () => {
    const metrics = new Metrics();
    const call = { operation: 'chat', provider: 'openai', model: 'gpt-test' } as const;
    const failure = Object.assign(new Error('no answer'), { code: 'model_timeout' });
    await expect(metrics.modelCall(call, () => Promise.reject(failure))).rejects.toBe(failure);
    let recorded!: () => void;
    const tokensRecorded = new Promise<void>((resolve) => (recorded = resolve));
    await metrics.modelCall(
      call,
      () => Promise.resolve('reply'),
      () => {
        setImmediate(recorded);
        return { input: 12, output: 5 };
      },
    );
    await tokensRecorded;
    const text = await metrics.exposition();
    const labels = 'gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-test"';
    expect(sample(text, `gen_ai_client_operation_duration_seconds_count{${labels},error_type="model_timeout"}`)).toBe(1);
    expect(sample(text, `gen_ai_client_operation_duration_seconds_count{${labels},error_type=""}`)).toBe(1);
    expect(sample(text, `gen_ai_client_token_usage_sum{${labels},gen_ai_token_type="input"}`)).toBe(12);
    expect(sample(text, `gen_ai_client_token_usage_sum{${labels},gen_ai_token_type="output"}`)).toBe(5);
  });

  it('names an HTTP method it does not know _OTHER (a client chooses the method)', async () => {
    const metrics = new Metrics();
    metrics.httpRequest('BREW', 'unmatched', 400, 0.01);
    expect(
      sample(await metrics.exposition(), 'http_server_request_duration_seconds_count{http_request_method="_OTHER",http_route="unmatched",http_response_status_code="400"}'),
    ).toBe(1);
  });

  it('answers a scrape when a read gauge fails or never answers (a stalled database), with that gauge empty', async () => {
    const metrics = new Metrics();
    metrics.gauge('stalled_reading', 'never answers', ['kind'], () => new Promise(() => undefined));
    metrics.gauge('failed_reading', 'fails', ['kind'], () => Promise.reject(new Error('down')));
    metrics.gauge('good_reading', 'answers', ['kind'], () => Promise.resolve([[{ kind: 'a' }, 3]]));
    const text = await metrics.exposition();
    expect(sample(text, 'good_reading{kind="a"}')).toBe(3);
    expect(text).toMatch(/^# TYPE stalled_reading gauge$/m);
    expect(text).not.toMatch(/^(stalled|failed)_reading/m);
  });

  it('reports the pools it watches', async () => {
    const metrics = new Metrics();
    metrics.watchPool('main', { totalCount: 5, idleCount: 2, waitingCount: 1, options: { max: 10 } });
    const text = await metrics.exposition();
    expect(sample(text, 'db_client_connections_usage{pool_name="main",state="used"}')).toBe(3);
    expect(sample(text, 'db_client_connections_usage{pool_name="main",state="idle"}')).toBe(2);
    expect(sample(text, 'db_client_connections_max{pool_name="main"}')).toBe(10);
    expect(sample(text, 'db_client_connections_pending_requests{pool_name="main"}')).toBe(1);
  });
});

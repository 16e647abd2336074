import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP/JSON carries it, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}

function plain(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

/**
 * An OTLP/HTTP trace receiver on loopback for the http/json protocol
 * (`POST /v1/traces`, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json): it
 * keeps every span, and `waitFor` resolves once the spans received satisfy
 * a condition (checked on each export, not on a timer).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests that were not OTLP/JSON trace exports (a wrong protocol or path). */
  readonly refused: string[] = [];
  private readonly server = http.createServer((req, res) => this.receive(req, res));
  private readonly waiters = new Set<() => void>();

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves with the condition's value once it is truthy; rejects after `timeoutMs` with what was received. */
  waitFor<T>(condition: (spans: ReceivedSpan[]) => T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = condition(this.spans);
        if (!found) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `no ${what} within ${timeoutMs} ms; received ${this.spans.length} spans: ${[...new Set(this.spans.map((span) => span.name))].join(', ')}; refused: ${this.refused.join(', ')}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  private receive(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        this.refused.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: Array<{ scopeSpans?: Array<{ scope?: { name?: string }; spans?: Array<Record<string, unknown>> }> }>;
      };
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            this.spans.push({
              traceId: String(span.traceId),
              spanId: String(span.spanId),
              parentSpanId: span.parentSpanId ? String(span.parentSpanId) : undefined,
              name: String(span.name),
              kind: Number(span.kind),
              scope: scope.scope?.name ?? '',
              attributes: Object.fromEntries(((span.attributes ?? []) as Array<{ key: string; value: OtlpValue }>).map(({ key, value }) => [key, plain(value)])),
              status: (span.status ?? {}) as ReceivedSpan['status'],
            });
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      for (const waiter of [...this.waiters]) waiter();
    });
  }
}

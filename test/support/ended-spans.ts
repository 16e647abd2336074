import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';

/**
 * A span processor that keeps every span as it ends, and resolves `waitFor`
 * once the spans ended so far satisfy a condition: checked on each span's
 * end, never on a timer. (A span whose attributes wait for a token count
 * ends a little after its work; SimpleSpanProcessor exports a microtask later.)
 */
export class EndedSpans implements SpanProcessor {
  readonly spans: ReadableSpan[] = [];
  private readonly waiters = new Set<() => void>();

  waitFor<T>(condition: (spans: ReadableSpan[]) => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
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
        reject(new Error(`no ${what} within ${timeoutMs} ms; ended: ${[...new Set(this.spans.map((span) => span.name))].join(', ')}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
    for (const waiter of [...this.waiters]) waiter();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

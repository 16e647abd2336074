import { networkFailure } from './network-failure.js';

export type HttpProbe = { reached: true; status: number; body: unknown } | { reached: false; problem: string };

/**
 * One GET at start-up, to say early whether an endpoint the service depends
 * on answers: its status and JSON body (undefined when it is not JSON), or
 * what stopped it, in our words (connection refused, timed out, host not
 * found, TLS…).
 */
export async function probeHttp(url: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<HttpProbe> {
  try {
    const response = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(timeoutMs) });
    const body: unknown = await response.json().catch(() => undefined);
    return { reached: true, status: response.status, body };
  } catch (error) {
    if ((error as { name?: unknown })?.name === 'TimeoutError') return { reached: false, problem: `timed out (no answer within ${timeoutMs} ms)` };
    return { reached: false, problem: networkFailure(error)?.words ?? (error instanceof Error ? error.message : String(error)) };
  }
}

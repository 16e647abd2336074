import type { FakeWeatherServer } from './fake-weather-server.js';
import { LiveSse, openSse } from './sse-client.js';

/**
 * Starts a streamed weather turn at `base` and returns once it is held inside
 * the weather tool (the fake server keeps the request until `release()`).
 */
export async function heldWeatherTurn(
  base: string,
  auth: Record<string, string>,
  weather: FakeWeatherServer,
  sessionId?: string,
): Promise<{ stream: LiveSse; runId: string; sessionId: string }> {
  weather.hold();
  const arrived = weather.nextRequest();
  const stream = await openSse(`${base}/api/chat/stream`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ message: 'What is the weather in Paris?', ...(sessionId ? { session_id: sessionId } : {}) }),
  });
  const metadata = await stream.waitFor((event) => event.event === 'metadata');
  await arrived;
  return { stream, runId: metadata.data.run_id as string, sessionId: metadata.data.session_id as string };
}

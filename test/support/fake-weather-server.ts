import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An Open-Meteo-compatible fake: geocoding and current conditions for a few
 * cities. `hold()` keeps every request waiting until `release()`, so a turn
 * that calls the weather tool stays in flight exactly as long as a test needs;
 * `nextRequest()` resolves when a request arrives.
 */
export class FakeWeatherServer {
  private server?: http.Server;
  delayMs = 0;
  requests: string[] = [];
  url = '';
  private gate?: Promise<void>;
  private openGate?: () => void;
  private readonly arrivals: Array<(url: string) => void> = [];

  hold(): void {
    if (this.gate) return;
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = undefined;
    this.openGate = undefined;
  }

  /** Resolves with the URL of the next request the server receives. */
  nextRequest(): Promise<string> {
    return new Promise((resolve) => this.arrivals.push(resolve));
  }

  private static readonly PLACES: Record<string, { name: string; country: string; latitude: number; longitude: number; temp: number; code: number }> = {
    paris: { name: 'Paris', country: 'France', latitude: 48.85, longitude: 2.35, temp: 18.5, code: 61 },
    北京: { name: '北京', country: '中国', latitude: 39.9, longitude: 116.4, temp: 25.1, code: 0 },
    berlin: { name: 'Berlin', country: 'Germany', latitude: 52.52, longitude: 13.4, temp: 12, code: 3 },
  };

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.requests.push(req.url ?? '');
      for (const arrived of this.arrivals.splice(0)) arrived(req.url ?? '');
      const gate = this.gate ?? Promise.resolve();
      void gate.then(() => setTimeout(() => this.handle(req, res), this.delayMs));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/v1/search') {
      const place = FakeWeatherServer.PLACES[(url.searchParams.get('name') ?? '').toLowerCase()];
      return json(200, place ? { results: [place] } : {});
    }
    if (url.pathname === '/v1/forecast') {
      const lat = Number(url.searchParams.get('latitude'));
      const place = Object.values(FakeWeatherServer.PLACES).find((p) => p.latitude === lat);
      if (!place) return json(400, { error: true, reason: 'unknown coordinates' });
      return json(200, {
        current: { temperature_2m: place.temp, relative_humidity_2m: 60, wind_speed_10m: 9.5, weather_code: place.code },
      });
    }
    json(404, { error: true });
  }
}

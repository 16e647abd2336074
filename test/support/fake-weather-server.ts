import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An Open-Meteo-compatible fake: geocoding and current conditions for a few cities, with an optional delay. */
export class FakeWeatherServer {
  private server?: http.Server;
  delayMs = 0;
  requests: string[] = [];
  url = '';

  private static readonly PLACES: Record<string, { name: string; country: string; latitude: number; longitude: number; temp: number; code: number }> = {
    paris: { name: 'Paris', country: 'France', latitude: 48.85, longitude: 2.35, temp: 18.5, code: 61 },
    北京: { name: '北京', country: '中国', latitude: 39.9, longitude: 116.4, temp: 25.1, code: 0 },
    berlin: { name: 'Berlin', country: 'Germany', latitude: 52.52, longitude: 13.4, temp: 12, code: 3 },
  };

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.requests.push(req.url ?? '');
      setTimeout(() => this.handle(req, res), this.delayMs);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
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

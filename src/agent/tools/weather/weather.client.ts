import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';

export interface CurrentWeather {
  location: string;
  country?: string;
  temperature_c: number;
  humidity_percent?: number;
  wind_kmh?: number;
  condition: string;
}

export class WeatherUnavailableError extends Error {}
export class PlaceNotFoundError extends Error {}

/** WMO weather interpretation codes, as Open-Meteo reports them. */
export const WMO: Record<number, string> = {
  0: 'clear sky',
  1: 'mainly clear',
  2: 'partly cloudy',
  3: 'overcast',
  45: 'fog',
  48: 'rime fog',
  51: 'light drizzle',
  53: 'drizzle',
  55: 'dense drizzle',
  61: 'light rain',
  63: 'rain',
  65: 'heavy rain',
  71: 'light snow',
  73: 'snow',
  75: 'heavy snow',
  80: 'rain showers',
  81: 'rain showers',
  82: 'violent rain showers',
  95: 'thunderstorm',
  96: 'thunderstorm with hail',
  99: 'thunderstorm with heavy hail',
};

/** An Open-Meteo-compatible client: geocoding, then current conditions. */
@Injectable()
export class WeatherClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** `signal` aborts the calls (the turn was cancelled). */
  async current(place: string, signal?: AbortSignal): Promise<CurrentWeather> {
    const { baseUrl, geocodingUrl } = this.config.weather;
    const language = /[\u3400-\u9fff]/.test(place) ? 'zh' : 'en';
    const geo = await this.getJson<{ results?: Array<{ name: string; country?: string; latitude: number; longitude: number }> }>(
      `${geocodingUrl}/v1/search?${new URLSearchParams({ name: place, count: '1', language, format: 'json' })}`,
      signal,
    );
    const hit = geo.results?.[0];
    if (!hit) throw new PlaceNotFoundError(`No place named "${place}" was found`);
    const forecast = await this.getJson<{
      current?: { temperature_2m?: number; relative_humidity_2m?: number; wind_speed_10m?: number; weather_code?: number };
    }>(
      `${baseUrl}/v1/forecast?${new URLSearchParams({
        latitude: String(hit.latitude),
        longitude: String(hit.longitude),
        current: 'temperature_2m,relative_humidity_2m,wind_speed_10m,weather_code',
      })}`,
      signal,
    );
    const now = forecast.current;
    if (!now || typeof now.temperature_2m !== 'number') throw new WeatherUnavailableError('the weather service sent no current conditions');
    return {
      location: hit.name,
      country: hit.country,
      temperature_c: now.temperature_2m,
      humidity_percent: now.relative_humidity_2m,
      wind_kmh: now.wind_speed_10m,
      condition: WMO[now.weather_code ?? -1] ?? 'unknown conditions',
    };
  }

  private async getJson<T>(url: string, cancel?: AbortSignal): Promise<T> {
    let response: Response;
    const deadline = AbortSignal.timeout(this.config.weather.timeoutMs);
    try {
      response = await fetch(url, { signal: cancel ? AbortSignal.any([cancel, deadline]) : deadline });
    } catch (error) {
      if (cancel?.aborted) throw cancel.reason;
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${this.config.weather.timeoutMs} ms` : 'unreachable';
      throw new WeatherUnavailableError(`the weather service is ${reason}`);
    }
    if (!response.ok) throw new WeatherUnavailableError(`the weather service answered HTTP ${response.status}`);
    try {
      return (await response.json()) as T;
    } catch {
      throw new WeatherUnavailableError('the weather service sent an unreadable answer');
    }
  }
}

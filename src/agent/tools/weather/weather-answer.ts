import { clip, containsCjk } from '../../../common/text.js';
import type { CurrentWeather } from './weather.client.js';

/** The offline model's answer from the weather tool's output (a report, or why there is none). */
export function composeWeatherAnswer(question: string, toolOutput: string): string {
  const zh = containsCjk(question);
  let report: CurrentWeather | null = null;
  try {
    const parsed = JSON.parse(toolOutput) as CurrentWeather;
    if (typeof parsed?.temperature_c === 'number') report = parsed;
  } catch {
    report = null;
  }
  if (!report) {
    const reason = clip(toolOutput.replace(/^Weather unavailable:\s*/, ''), 200);
    return zh ? `暂时无法获取天气信息：${reason}` : `I could not get the weather: ${reason}`;
  }
  const wind = report.wind_kmh !== undefined ? (zh ? `，风速 ${report.wind_kmh} km/h` : `, wind ${report.wind_kmh} km/h`) : '';
  const humidity = report.humidity_percent !== undefined ? (zh ? `，湿度 ${report.humidity_percent}%` : `, humidity ${report.humidity_percent}%`) : '';
  return zh
    ? `${report.location}当前天气：${report.condition}，气温 ${report.temperature_c}°C${wind}${humidity}。`
    : `Current weather in ${report.location}: ${report.condition}, ${report.temperature_c}°C${wind}${humidity}.`;
}

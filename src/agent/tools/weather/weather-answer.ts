import { clip, containsCjk } from '../../../common/text.js';
import type { CurrentWeather } from './weather.client.js';

/** The conditions WeatherClient reports (WMO codes as Open-Meteo gives them), in Chinese. */
const CONDITION_ZH: Record<string, string> = {
  'clear sky': '晴',
  'mainly clear': '大部晴朗',
  'partly cloudy': '多云',
  overcast: '阴',
  fog: '雾',
  'rime fog': '冻雾',
  'light drizzle': '小毛毛雨',
  drizzle: '毛毛雨',
  'dense drizzle': '浓毛毛雨',
  'light rain': '小雨',
  rain: '中雨',
  'heavy rain': '大雨',
  'light snow': '小雪',
  snow: '中雪',
  'heavy snow': '大雪',
  'rain showers': '阵雨',
  'violent rain showers': '强阵雨',
  thunderstorm: '雷暴',
  'thunderstorm with hail': '雷暴伴有冰雹',
  'thunderstorm with heavy hail': '雷暴伴有强冰雹',
  'unknown conditions': '天气状况不明',
};

/** Why there is no report (WeatherClient's reasons), in Chinese; an unknown reason as it is. */
const REASONS_ZH: Array<[RegExp, (...groups: string[]) => string]> = [
  [/^No place named "(.*)" was found$/, (place) => `没有找到名为“${place}”的地点`],
  [/^the weather service is unreachable$/, () => '天气服务无法连接'],
  [/^the weather service is no answer within (\d+) ms$/, (ms) => `天气服务在 ${ms} 毫秒内没有回应`],
  [/^the weather service answered HTTP (\d+)$/, (status) => `天气服务返回了 HTTP ${status}`],
  [/^the weather service sent no current conditions$/, () => '天气服务没有给出当前天气'],
  [/^the weather service sent an unreadable answer$/, () => '天气服务的回复无法读取'],
];

function reasonInChinese(reason: string): string {
  for (const [pattern, say] of REASONS_ZH) {
    const match = pattern.exec(reason);
    if (match) return say(...match.slice(1));
  }
  return reason;
}

/** The offline model's answer from the weather tool's output (a report, or why there is none), in the language of the question. */
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
    const reason = clip(toolOutput.replace(/^Weather unavailable:\s*/, '').replace(/\.$/, ''), 200);
    return zh ? `暂时无法获取天气信息：${reasonInChinese(reason)}。` : `I could not get the weather: ${reason}.`;
  }
  const wind = report.wind_kmh !== undefined ? (zh ? `，风速 ${report.wind_kmh} km/h` : `, wind ${report.wind_kmh} km/h`) : '';
  const humidity = report.humidity_percent !== undefined ? (zh ? `，湿度 ${report.humidity_percent}%` : `, humidity ${report.humidity_percent}%`) : '';
  return zh
    ? `${report.location}当前天气：${CONDITION_ZH[report.condition] ?? report.condition}，气温 ${report.temperature_c}°C${wind}${humidity}。`
    : `Current weather in ${report.location}: ${report.condition}, ${report.temperature_c}°C${wind}${humidity}.`;
}

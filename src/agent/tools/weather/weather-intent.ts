import { containsCjk } from '../../../common/text.js';

/** Whether a message asks about the weather, and for which place: the offline model's routing rule for the weather tool. */

const WEATHER = /天气|气温|温度|下雨|下雪|刮风|weather|temperature|forecast|\brain(ing|y)?\b|\bsnow(ing|y)?\b|\bsunny\b/i;

const ZH_TIME = /(今天|明天|后天|现在|目前|此刻|这几天|本周|今晚)/g;
const ZH_WEATHER_TAIL = /(的)?(天气|气温|温度|会不会下雨|下雨|下雪|刮风)[\s\S]*$/;

function zhLocation(text: string): string | null {
  const head = text
    .replace(ZH_WEATHER_TAIL, '')
    .replace(ZH_TIME, '')
    .replace(/^(请问|帮我查一下|帮我查|查一下|查询|请)/, '');
  const place = head
    .replace(/[的\s，,。？?！!]+$/g, '')
    .replace(/^[\s，,]+/, '')
    .trim();
  return place && place.length <= 20 ? place : null;
}

function enLocation(text: string): string | null {
  const after = text.match(/\b(?:in|at|for|of)\s+([A-Za-z\u00C0-\u024F][A-Za-z\u00C0-\u024F .'-]*?)\s*(?:\b(?:today|tomorrow|now|right now|this week|tonight)\b)?\s*[?.!]*$/i);
  if (after) return after[1].trim();
  const before = text.match(/^([A-Z][A-Za-z\u00C0-\u024F .'-]*?)\s+weather\b/);
  return before ? before[1].trim() : null;
}

/** null: not about the weather; `{location: null}`: about the weather, no place named. */
export function detectWeatherRequest(message: string): { location: string | null } | null {
  const text = message.trim();
  if (!WEATHER.test(text)) return null;
  return { location: containsCjk(text) ? (zhLocation(text) ?? enLocation(text)) : enLocation(text) };
}

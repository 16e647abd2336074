import { containsCjk } from '../../../common/text.js';

/**
 * Whether a message asks about the weather, and for which place: the
 * offline model's routing rule for the weather tool.
 *
 * "Weather", "forecast", 天气 and 气温 ask for it whatever else the message
 * says. A temperature, rain or snow asks for it only with a sign that the sky
 * somewhere is meant: a time (today, 明天), the outdoors, or a place named
 * as a weather report names it ("in Paris", 上海市). "机房温度应该控制在多少度
 * 之间？" or "Does the warranty cover rain damage?" ask the knowledge base.
 */

const WEATHER = /天气|气温|weather|forecast/i;
const WEATHER_CONDITION = /温度|下雨|下雪|刮风|降雨|降温|temperature|\brain(?:ing|y)?\b|\bsnow(?:ing|y)?\b|\bsunny\b|\bwindy\b|\bhow (?:hot|cold|warm)\b/i;
const NOW_OR_OUTSIDE =
  /今天|明天|后天|现在|目前|此刻|这几天|本周|今晚|明早|今早|周末|室外|户外|外面|\b(?:today|tomorrow|tonight|now|right now|this (?:week|weekend|morning|afternoon|evening)|outside|outdoors)\b/i;
/** A place named the way a weather question names it: "in Paris", "at Berlin", or a Chinese place name with its suffix (上海市, 朝阳区). */
const NAMED_PLACE = /\b(?:in|at|for)\s+[A-Z\u00C0-\u024F][A-Za-z\u00C0-\u024F.'-]*|[\u3400-\u9fff](?:市(?!场)|省(?!略|钱)|县|区(?!域|间|别|分)|镇)/;

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

/** Whether the message is a weather request: a weather word, or a temperature, rain or snow somewhere at some time. */
function asksForWeather(text: string): boolean {
  if (WEATHER.test(text)) return true;
  return WEATHER_CONDITION.test(text) && (NOW_OR_OUTSIDE.test(text) || NAMED_PLACE.test(text));
}

/** null: not about the weather; `{location: null}`: about the weather, no place named. */
export function detectWeatherRequest(message: string): { location: string | null } | null {
  const text = message.trim();
  if (!asksForWeather(text)) return null;
  return { location: containsCjk(text) ? (zhLocation(text) ?? enLocation(text)) : enLocation(text) };
}

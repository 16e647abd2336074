import { containsCjk } from '../common/text.js';

/** Rule-based intent detection for the offline model, for Chinese and English alike. */

export type Intent =
  | { kind: 'greeting' }
  | { kind: 'thanks' }
  | { kind: 'weather'; location: string | null }
  | { kind: 'question' };

const GREETING = /^(hi|hello|hey|good (morning|afternoon|evening)|你好|您好|嗨|哈喽|早上好|晚上好|下午好)[\s!！。.,，~～]*$/i;
const THANKS = /^(thanks|thank you|thx|bye|goodbye|谢谢|多谢|感谢|再见|拜拜)[\s\S]{0,12}$/i;
const WEATHER = /天气|气温|温度|下雨|下雪|刮风|weather|temperature|forecast|\brain(ing|y)?\b|\bsnow(ing|y)?\b|\bsunny\b/i;

const ZH_TIME = /(今天|明天|后天|现在|目前|此刻|这几天|本周|今晚)/g;
const ZH_WEATHER_TAIL = /(的)?(天气|气温|温度|会不会下雨|下雨|下雪|刮风)[\s\S]*$/;

function zhLocation(text: string): string | null {
  const head = text.replace(ZH_WEATHER_TAIL, '').replace(ZH_TIME, '').replace(/^(请问|帮我查一下|帮我查|查一下|查询|请)/, '');
  const place = head.replace(/[的\s，,。？?！!]+$/g, '').replace(/^[\s，,]+/, '').trim();
  return place && place.length <= 20 ? place : null;
}

function enLocation(text: string): string | null {
  const after = text.match(/\b(?:in|at|for|of)\s+([A-Za-z\u00C0-\u024F][A-Za-z\u00C0-\u024F .'-]*?)\s*(?:\b(?:today|tomorrow|now|right now|this week|tonight)\b)?\s*[?.!]*$/i);
  if (after) return after[1].trim();
  const before = text.match(/^([A-Z][A-Za-z\u00C0-\u024F .'-]*?)\s+weather\b/);
  return before ? before[1].trim() : null;
}

export function detectIntent(message: string): Intent {
  const text = message.trim();
  if (GREETING.test(text)) return { kind: 'greeting' };
  if (THANKS.test(text)) return { kind: 'thanks' };
  if (WEATHER.test(text)) {
    const location = containsCjk(text) ? zhLocation(text) ?? enLocation(text) : enLocation(text);
    return { kind: 'weather', location };
  }
  return { kind: 'question' };
}

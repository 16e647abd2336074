/** Small talk the offline model answers itself, in Chinese and English alike; everything else goes to its tools. */

export type SmallTalk = 'greeting' | 'thanks';

const GREETING = /^(hi|hello|hey|good (morning|afternoon|evening)|你好|您好|嗨|哈喽|早上好|晚上好|下午好)[\s!！。.,，~～]*$/i;
const THANKS = /^(thanks|thank you|thx|bye|goodbye|谢谢|多谢|感谢|再见|拜拜)[\s\S]{0,12}$/i;

export function detectSmallTalk(message: string): SmallTalk | null {
  const text = message.trim();
  if (GREETING.test(text)) return 'greeting';
  if (THANKS.test(text)) return 'thanks';
  return null;
}

import { composeWeatherAnswer } from './weather-answer.js';
import { detectWeatherRequest } from './weather-intent.js';

describe('the weather tool’s offline routing', () => {
  it.each([
    ['北京今天天气怎么样？', { location: '北京' }],
    ['请问广州明天会不会下雨', { location: '广州' }],
    ['What is the weather in New York today?', { location: 'New York' }],
    ['Berlin weather', { location: 'Berlin' }],
    ["what's the weather like?", { location: null }],
    ['保修期多久？', null],
    ['How do I reset the router?', null],
  ])('%s → %j', (message, request) => {
    expect(detectWeatherRequest(message)).toEqual(request);
  });

  it('explains a failure in the language of the question', () => {
    expect(composeWeatherAnswer('weather in Oslo', 'Weather unavailable: the weather service is unreachable.')).toBe(
      'I could not get the weather: the weather service is unreachable.',
    );
    expect(composeWeatherAnswer('北京天气', 'Weather unavailable: the weather service is unreachable.')).toBe('暂时无法获取天气信息：the weather service is unreachable.');
  });
});

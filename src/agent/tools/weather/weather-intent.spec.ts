import { composeWeatherAnswer } from './weather-answer.js';
import { detectWeatherRequest } from './weather-intent.js';
import { WMO } from './weather.client.js';

describe('the weather tool’s offline routing', () => {
  it.each([
    ['北京今天天气怎么样？', { location: '北京' }],
    ['请问广州明天会不会下雨', { location: '广州' }],
    ['What is the weather in New York today?', { location: 'New York' }],
    ["what's the weather in Paris", { location: 'Paris' }],
    ['Berlin weather', { location: 'Berlin' }],
    ["what's the weather like?", { location: null }],
    ['上海气温多少？', { location: '上海' }],
    ['What is the temperature in Oslo right now?', { location: 'Oslo' }],
    ['Will it rain in London tomorrow?', { location: 'London' }],
    ['杭州市现在温度多少？', { location: '杭州市' }],
    ['保修期多久？', null],
    ['How do I reset the router?', null],
  ])('%s → %j', (message, request) => {
    expect(detectWeatherRequest(message)).toEqual(request);
  });

  it.each([
    // A temperature, rain or snow without a time, the outdoors or a place named as a weather question names one.
    '机房温度应该控制在多少度之间？',
    'What temperature should the server room be kept at?',
    'Does the X1 warranty cover damage from rain?',
    '下雨天路由器进水了还能保修吗？',
    '路由器的工作温度范围是多少？',
  ])('%s is a question for the knowledge base', (message) => {
    expect(detectWeatherRequest(message)).toBeNull();
  });

  it('explains a failure in the language of the question', () => {
    expect(composeWeatherAnswer('weather in Oslo', 'Weather unavailable: the weather service is unreachable.')).toBe(
      'I could not get the weather: the weather service is unreachable.',
    );
    expect(composeWeatherAnswer('北京天气', 'Weather unavailable: the weather service is unreachable.')).toBe('暂时无法获取天气信息：天气服务无法连接。');
    expect(composeWeatherAnswer('火星城天气', 'Weather unavailable: No place named "火星城" was found.')).toBe('暂时无法获取天气信息：没有找到名为“火星城”的地点。');
    expect(composeWeatherAnswer('北京天气', 'Weather unavailable: the weather service is no answer within 5000 ms.')).toBe(
      '暂时无法获取天气信息：天气服务在 5000 毫秒内没有回应。',
    );
  });

  it('reports the weather in the language of the question, conditions included', () => {
    const report = JSON.stringify({ location: '北京', temperature_c: 21.5, humidity_percent: 40, wind_kmh: 12, condition: 'partly cloudy' });
    expect(composeWeatherAnswer('北京今天天气怎么样？', report)).toBe('北京当前天气：多云，气温 21.5°C，风速 12 km/h，湿度 40%。');
    expect(composeWeatherAnswer('Weather in Beijing?', report)).toBe('Current weather in 北京: partly cloudy, 21.5°C, wind 12 km/h, humidity 40%.');
    for (const condition of [...Object.values(WMO), 'unknown conditions']) {
      expect(composeWeatherAnswer('天气', JSON.stringify({ location: '北京', temperature_c: 1, condition }))).not.toMatch(/[a-z]{3}/);
    }
  });
});

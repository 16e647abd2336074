import { Injectable } from '@nestjs/common';
import type { RunnableConfig } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { containsCjk } from '../../../common/text.js';
import type { LocalToolRouting } from '../../../models/local-tool-routing.js';
import { AgentTool, AgentToolPlugin } from '../agent-tool.js';
import { composeWeatherAnswer } from './weather-answer.js';
import { detectWeatherRequest } from './weather-intent.js';
import { PlaceNotFoundError, WeatherClient, WeatherUnavailableError } from './weather.client.js';

export const WEATHER_TOOL_NAME = 'get_weather';

@AgentTool()
@Injectable()
export class WeatherTool implements AgentToolPlugin {
  readonly name = WEATHER_TOOL_NAME;
  readonly promptRules = [`- For current weather, call ${WEATHER_TOOL_NAME} with the place name. If it reports a failure, explain that the weather service is unavailable.`];
  readonly localRouting: LocalToolRouting = {
    priority: 10,
    capability: { en: 'check the weather', zh: '查询天气' },
    route: (message) => {
      const request = detectWeatherRequest(message);
      if (!request) return null;
      if (!request.location) {
        return { ask: containsCjk(message) ? '请告诉我想查询哪个城市的天气。' : 'Which city should I check the weather for?' };
      }
      return { call: { location: request.location } };
    },
    compose: composeWeatherAnswer,
  };

  constructor(private readonly client: WeatherClient) {}

  create() {
    return tool(
      async ({ location }: { location: string }, config?: RunnableConfig) => {
        try {
          return JSON.stringify(await this.client.current(location, config?.signal));
        } catch (error) {
          // A failure is something for the model to explain, not an error of the turn.
          if (error instanceof WeatherUnavailableError || error instanceof PlaceNotFoundError) {
            return `Weather unavailable: ${error.message}.`;
          }
          throw error;
        }
      },
      {
        name: WEATHER_TOOL_NAME,
        description: 'Current weather for a city or place (temperature, conditions, wind).',
        schema: z.object({ location: z.string().min(1).max(200).describe('City or place name, e.g. "Paris" or "北京"') }),
      },
    );
  }
}

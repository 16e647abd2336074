import { Injectable } from '@nestjs/common';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { AgentTool, AgentToolFactory } from '../agent-tool.js';
import { PlaceNotFoundError, WeatherClient, WeatherUnavailableError } from './weather.client.js';

export const WEATHER_TOOL_NAME = 'get_weather';

@AgentTool()
@Injectable()
export class WeatherTool implements AgentToolFactory {
  readonly name = WEATHER_TOOL_NAME;

  constructor(private readonly client: WeatherClient) {}

  create() {
    return tool(
      async ({ location }: { location: string }) => {
        try {
          return JSON.stringify(await this.client.current(location));
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

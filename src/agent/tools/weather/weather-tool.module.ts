import { Module } from '@nestjs/common';
import { WeatherClient } from './weather.client.js';
import { WeatherTool } from './weather.tool.js';

@Module({ providers: [WeatherClient, WeatherTool] })
export class WeatherToolModule {}

import { jest } from '@jest/globals';
import type { DiscoveryService } from '@nestjs/core';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { AgentToolPlugin } from './agent-tool.js';
import { ToolRegistry } from './tool-registry.service.js';

const makeTool = (name: string) => tool(async () => name, { name, description: name, schema: z.object({}) });

describe('ToolRegistry', () => {
  function registryOf(plugins: AgentToolPlugin[]): ToolRegistry {
    const discovery = { getProviders: () => plugins.map((instance) => ({ instance })) } as unknown as DiscoveryService;
    return new ToolRegistry(discovery);
  }

  it('builds static tools once, and a changing plug-in’s tools again only when its version moves', () => {
    const staticCreate = jest.fn(() => makeTool('weather'));
    let version = 0;
    let names = ['a'];
    const dynamicCreate = jest.fn(() => names.map(makeTool));
    const registry = registryOf([
      { name: 'weather', promptRules: [], create: staticCreate },
      { name: 'mcp', promptRules: [], create: dynamicCreate, toolsVersion: () => version },
    ]);
    expect(registry.toolNames).toEqual(['weather', 'a']);
    const first = registry.version;
    expect(registry.toolNames).toEqual(['weather', 'a']);
    expect(registry.version).toBe(first);
    expect(dynamicCreate).toHaveBeenCalledTimes(1);

    names = ['a', 'b'];
    version = 1;
    expect(registry.toolNames).toEqual(['weather', 'a', 'b']);
    expect(registry.version).toBe(first + 1);
    expect(dynamicCreate).toHaveBeenCalledTimes(2);
    expect(staticCreate).toHaveBeenCalledTimes(1);
  });

  it('keeps the first of two tools with one name across plug-ins', () => {
    const registry = registryOf([
      { name: 'one', promptRules: ['- one'], create: () => makeTool('same') },
      { name: 'two', promptRules: ['- two'], create: () => [makeTool('same'), makeTool('other')] },
    ]);
    expect(registry.toolNames).toEqual(['same', 'other']);
    expect(registry.promptRules).toEqual(['- one', '- two']);
  });
});

import { Controller, Get, Injectable, Module, Param } from '@nestjs/common';
import { tool } from '@langchain/core/tools';
import request from 'supertest';
import { z } from 'zod';
import { AgentTool, AgentToolPlugin } from '../src/agent/tools/agent-tool.js';
import type { AuthUser } from '../src/auth/auth-user.js';
import { CurrentUser } from '../src/auth/current-user.decorator.js';
import { CodedError } from '../src/common/coded-error.js';
import type { LocalToolRouting } from '../src/models/local-tool-routing.js';
import { createTestApp, TestApp, uniqueUser } from './support/test-app.js';
import { readSse } from './support/sse-client.js';

/**
 * The worked examples of docs/extending.md, each exactly as the page shows
 * it: a module added to the app and nothing else changed.
 */

// ---- docs/extending.md, "A tool"
@AgentTool()
@Injectable()
export class UnitConverterTool implements AgentToolPlugin {
  readonly name = 'convert_units';
  readonly promptRules = ['- To convert a length between metres and feet, call convert_units with the value and its unit.'];
  readonly localRouting: LocalToolRouting = {
    priority: 5,
    capability: { en: 'convert metres and feet', zh: '换算米和英尺' },
    route: (message) => {
      const match = message.match(/(\d+(?:\.\d+)?)\s*(m|metres?|meters?|ft|feet|foot)\b/i);
      if (!match || !/\bconvert\b|换算/i.test(message)) return null;
      return { call: { value: Number(match[1]), unit: /^f/i.test(match[2]) ? 'ft' : 'm' } };
    },
    compose: (_question, output) => `That is ${output}.`,
  };

  create() {
    return tool(
      async ({ value, unit }: { value: number; unit: 'm' | 'ft' }) =>
        unit === 'm' ? `${(value / 0.3048).toFixed(2)} ft` : `${(value * 0.3048).toFixed(2)} m`,
      {
        name: this.name,
        description: 'Converts a length between metres and feet.',
        schema: z.object({ value: z.number(), unit: z.enum(['m', 'ft']) }),
      },
    );
  }
}

@Module({ providers: [UnitConverterTool] })
export class UnitConverterToolModule {}

// ---- docs/extending.md, "A route"
export class BookmarkNotFoundError extends CodedError {
  readonly code = 'not_found';
  constructor(id: string) {
    super(`Bookmark ${id} not found`);
  }
}

@Controller('api/bookmarks')
export class BookmarksController {
  private readonly bookmarks = new Map<string, string>([['welcome', 'Read the README first']]);

  @Get(':id')
  find(@CurrentUser() user: AuthUser, @Param('id') id: string): { id: string; note: string; user: string } {
    const note = this.bookmarks.get(id);
    if (!note) throw new BookmarkNotFoundError(id);
    return { id, note, user: user.userId };
  }
}

@Module({ controllers: [BookmarksController] })
export class BookmarksModule {}

describe('docs/extending.md examples', () => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '0' }, undefined, [UnitConverterToolModule, BookmarksModule]);
    base = await t.listen();
  });
  afterAll(() => t.close());

  describe('a tool', () => {
    it('is called by the offline model by its routing hint and answered from its output', async () => {
      const stream = await readSse(`${base}/api/chat/stream`, {
        method: 'POST',
        headers: { ...t.auth(uniqueUser('tool')), 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'Please convert 10 m to feet' }),
      });
      const tools = stream.events.filter((e) => e.event === 'tool').map((e) => [e.data.name, e.data.phase]);
      expect(tools).toEqual([
        ['convert_units', 'start'],
        ['convert_units', 'end'],
      ]);
      expect(stream.events.at(-1)).toMatchObject({ event: 'done', data: { response: 'That is 32.81 ft.' } });
    });

    it('is offered in the offline model’s greeting, and the other tools keep working', async () => {
      const user = uniqueUser('tool');
      const hello = await request(t.app.getHttpServer()).post('/api/chat').set(t.auth(user)).send({ message: 'Hello' }).expect(200);
      expect(hello.body.response).toContain('convert metres and feet');
      const knowledge = await request(t.app.getHttpServer())
        .post('/api/chat')
        .set(t.auth(user))
        .send({ message: 'How many days do I have to return an item?' })
        .expect(200);
      expect(knowledge.body.rag_trace.tool_name).toBe('knowledge_search');
    });
  });

  describe('a route', () => {
    it('is authenticated by the global guard and answers its coded errors with their status', async () => {
      await request(t.app.getHttpServer()).get('/api/bookmarks/welcome').expect(401);
      const user = uniqueUser('route');
      const found = await request(t.app.getHttpServer()).get('/api/bookmarks/welcome').set(t.auth(user)).expect(200);
      expect(found.body).toEqual({ id: 'welcome', note: 'Read the README first', user });
      const missing = await request(t.app.getHttpServer()).get('/api/bookmarks/nope').set(t.auth(user)).expect(404);
      expect(missing.body).toMatchObject({ statusCode: 404, code: 'not_found', message: 'Bookmark nope not found' });
    });
  });
});

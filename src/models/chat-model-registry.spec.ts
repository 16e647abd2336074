import { ChatOpenAI } from '@langchain/openai';
import { AppConfig, ConfigValidationError, LLM_PROVIDERS, loadConfig } from '../config/app-config.js';
import { CHAT_MODEL_PROVIDERS, createChatModel } from './chat-models.js';
import { LocalChatModel } from './local-chat-model.js';

describe('chat model providers', () => {
  it('offers exactly the names LLM_PROVIDER accepts', () => {
    expect([...CHAT_MODEL_PROVIDERS.names].sort()).toEqual([...LLM_PROVIDERS].sort());
  });

  it('builds the local model for each role by default', () => {
    const config = loadConfig({});
    expect(createChatModel(config, 'main')).toBeInstanceOf(LocalChatModel);
    expect((createChatModel(config, 'fast') as LocalChatModel).role).toBe('fast');
  });

  it('builds an OpenAI-compatible client with the role model, the base URL and the key', () => {
    const config = loadConfig({
      LLM_PROVIDER: 'openai',
      LLM_BASE_URL: 'http://127.0.0.1:9/v1',
      LLM_API_KEY: 'secret-key',
      LLM_MODEL: 'main-model',
      LLM_FAST_MODEL: 'fast-model',
    });
    const main = createChatModel(config, 'main') as ChatOpenAI;
    expect(main).toBeInstanceOf(ChatOpenAI);
    expect(main.model).toBe('main-model');
    expect(main.apiKey).toBe('secret-key');
    expect(main.clientConfig.baseURL).toBe('http://127.0.0.1:9/v1');
    expect((createChatModel(config, 'fast') as ChatOpenAI).model).toBe('fast-model');
  });

  it('never builds an openai client for the public host without a key, even from a hand-built configuration', () => {
    const base = loadConfig({});
    const handBuilt: AppConfig = { ...base, llm: { ...base.llm, provider: 'openai', apiKey: undefined, baseUrl: undefined } };
    expect(() => createChatModel(handBuilt, 'main')).toThrow(ConfigValidationError);
    expect(() => createChatModel(handBuilt, 'main')).toThrow(/LLM_API_KEY: required when LLM_PROVIDER=openai/);
  });

  it('refuses a provider name it does not have, naming LLM_PROVIDER and the choices', () => {
    const base = loadConfig({});
    const handBuilt = { ...base, llm: { ...base.llm, provider: 'anthropic' } } as unknown as AppConfig;
    expect(() => createChatModel(handBuilt, 'main')).toThrow(/LLM_PROVIDER: must be one of local, openai \(got "anthropic"\)/);
  });
});

import { AppConfig, ConfigValidationError, loadConfig } from '../config/app-config.js';
import { ProviderRegistry } from './provider-registry.js';

interface Greeter {
  greet(name: string): string;
}

/** A provider that exists only in this test: one class, registered by listing it. */
class ShoutingGreeter implements Greeter {
  static readonly providerName = 'shouting';

  static fromConfig(config: AppConfig, punctuation: string): ShoutingGreeter {
    return new ShoutingGreeter(config.llm.model, punctuation);
  }

  constructor(
    private readonly model: string,
    private readonly punctuation: string,
  ) {}

  greet(name: string): string {
    return `HELLO ${name.toUpperCase()} FROM ${this.model}${this.punctuation}`;
  }
}

class QuietGreeter implements Greeter {
  static readonly providerName = 'quiet';

  static fromConfig(): QuietGreeter {
    return new QuietGreeter();
  }

  greet(name: string): string {
    return `hello ${name}`;
  }
}

describe('ProviderRegistry', () => {
  const config = loadConfig({ LLM_MODEL: 'test-model' });

  function registry(choice: string, providers = [QuietGreeter, ShoutingGreeter], accepted?: string[]) {
    return new ProviderRegistry<Greeter, [punctuation: string]>({ variable: 'GREETER_PROVIDER', select: () => choice, providers, accepted });
  }

  it('builds the provider the configuration names, passing it the configuration and the arguments', () => {
    expect(registry('shouting').create(config, '!').greet('ada')).toBe('HELLO ADA FROM test-model!');
    expect(registry('quiet').create(config, '!').greet('ada')).toBe('hello ada');
    expect(registry('quiet').names).toEqual(['quiet', 'shouting']);
  });

  it('refuses an unknown name as a configuration error naming the variable and the registered names', () => {
    const create = () => registry('whispering').create(config, '!');
    expect(create).toThrow(ConfigValidationError);
    expect(create).toThrow('Invalid environment configuration:\nGREETER_PROVIDER: must be one of quiet, shouting (got "whispering")');
  });

  it('refuses two providers under one name', () => {
    expect(() => registry('quiet', [QuietGreeter, QuietGreeter])).toThrow(/GREETER_PROVIDER: two providers are registered as "quiet"/);
  });

  it('refuses to be built when it and the names the schema accepts differ', () => {
    expect(() => registry('quiet', [QuietGreeter, ShoutingGreeter], ['quiet', 'shouting'])).not.toThrow();
    expect(() => registry('quiet', [QuietGreeter], ['quiet', 'shouting'])).toThrow(/schema accepts quiet, shouting but the registered providers are quiet/);
    expect(() => registry('quiet', [QuietGreeter, ShoutingGreeter], ['quiet'])).toThrow(/GREETER_PROVIDER: the configuration schema accepts quiet/);
  });
});

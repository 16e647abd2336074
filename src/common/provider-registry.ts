import { AppConfig, ConfigValidationError } from '../config/app-config.js';

/**
 * A provider is one class: its name (the value of its `*_PROVIDER`
 * variable) and a factory from the configuration, both static, so the class
 * itself is what a registry lists.
 */
export interface ProviderClass<Product, Args extends unknown[] = []> {
  readonly providerName: string;
  fromConfig(config: AppConfig, ...args: Args): Product;
}

export interface ProviderRegistryOptions<Product, Args extends unknown[]> {
  /** The environment variable that chooses the provider; errors name it. */
  variable: string;
  /** The chosen name, read from the configuration. */
  select(config: AppConfig): string;
  providers: readonly ProviderClass<Product, Args>[];
  /**
   * The names the configuration schema accepts for `variable`. When given,
   * the registry must offer exactly these, or building it throws: a schema
   * and a registry that drifted apart stop the service at start-up.
   */
  accepted?: readonly string[];
}

/** Providers of one kind, keyed by name. Adding one is adding its class to the list. */
export class ProviderRegistry<Product, Args extends unknown[] = []> {
  readonly variable: string;
  private readonly byName = new Map<string, ProviderClass<Product, Args>>();
  private readonly select: (config: AppConfig) => string;

  constructor(options: ProviderRegistryOptions<Product, Args>) {
    this.variable = options.variable;
    this.select = options.select;
    for (const provider of options.providers) {
      if (this.byName.has(provider.providerName)) {
        throw new Error(`${this.variable}: two providers are registered as "${provider.providerName}"`);
      }
      this.byName.set(provider.providerName, provider);
    }
    if (options.accepted) {
      const accepted = new Set(options.accepted);
      const unregistered = [...accepted].filter((name) => !this.byName.has(name));
      const unaccepted = this.names.filter((name) => !accepted.has(name));
      if (unregistered.length > 0 || unaccepted.length > 0) {
        throw new Error(
          `${this.variable}: the configuration schema accepts ${[...accepted].join(', ')} but the registered providers are ` +
            `${this.names.join(', ')}; add the missing provider class to the registry or the name to the schema`,
        );
      }
    }
  }

  /** The registered names, in registration order. */
  get names(): string[] {
    return [...this.byName.keys()];
  }

  /** The provider class registered under `name`; an unknown name is a configuration error naming the variable and the choices. */
  resolve(name: string): ProviderClass<Product, Args> {
    const provider = this.byName.get(name);
    if (!provider) {
      throw new ConfigValidationError([{ variable: this.variable, message: `must be one of ${this.names.join(', ')} (got ${JSON.stringify(name)})` }]);
    }
    return provider;
  }

  /** Builds the provider the configuration names. */
  create(config: AppConfig, ...args: Args): Product {
    return this.resolve(this.select(config)).fromConfig(config, ...args);
  }
}

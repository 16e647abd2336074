import { ProviderRegistry } from '../../common/provider-registry.js';
import { AppConfig, RERANK_PROVIDERS } from '../../config/app-config.js';
import { HttpRerank, LocalRerank, NoRerank, RerankProvider } from './rerank.js';

/** The reranker classes: add a provider's class here (and its name to RERANK_PROVIDERS). */
export const RERANK_PROVIDER_CLASSES = [LocalRerank, HttpRerank, NoRerank] as const;

/** The rerankers, chosen by RERANK_PROVIDER; `none` gives no reranker (null). */
export const RERANK_PROVIDER_REGISTRY = new ProviderRegistry<RerankProvider | null>({
  variable: 'RERANK_PROVIDER',
  select: (config) => config.rerank.provider,
  accepted: RERANK_PROVIDERS,
  providers: RERANK_PROVIDER_CLASSES,
});

export function createRerankProvider(config: AppConfig): RerankProvider | null {
  return RERANK_PROVIDER_REGISTRY.create(config);
}

import { ENVIRONMENT } from './app-config.js';
import { describeMisspelling, misspelledVariables } from './misspelled-variables.js';

const KNOWN = Object.keys(ENVIRONMENT);
const suggestions = (names: string[]) => misspelledVariables(names, KNOWN).map(({ name, suggestion }) => `${name} → ${suggestion}`);

describe('misspelledVariables', () => {
  it('suggests the variable a misspelt name is closest to', () => {
    expect(suggestions(['LLM_PROVDER', 'LLM_MODLE', 'DATABSE_URL', 'REDIS_URI', 'RAG_DENSE_BACKEN', 'llm_provider', 'Log_Level'])).toEqual([
      'LLM_PROVDER → LLM_PROVIDER',
      'LLM_MODLE → LLM_MODEL',
      'DATABSE_URL → DATABASE_URL',
      'REDIS_URI → REDIS_URL',
      'RAG_DENSE_BACKEN → RAG_DENSE_BACKEND',
      'llm_provider → LLM_PROVIDER',
      'Log_Level → LOG_LEVEL',
    ]);
  });

  it('leaves our own variables, and the rest of a shell’s environment, alone', () => {
    const shell = ['PATH', 'HOME', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'HTTPS_PROXY', 'HTTP_PROXY', 'npm_config_cache', 'REDIS_HOST', 'REDIS_PASSWORD', 'LOGNAME', 'HOSTNAME'];
    expect(suggestions([...KNOWN, ...shell])).toEqual([]);
  });

  it('leaves names too far from any of ours', () => {
    expect(suggestions(['LLM_TEMPERATURE', 'DATABASE_HOST', 'RAG_FOO'])).toEqual([]);
  });

  it('says so in one line', () => {
    expect(describeMisspelling({ name: 'LLM_PROVDER', suggestion: 'LLM_PROVIDER' })).toBe(
      'LLM_PROVDER: did you mean LLM_PROVIDER? LLM_PROVDER is not a setting of this service and is ignored',
    );
    expect(describeMisspelling({ name: 'LLM_PROVDER', suggestion: 'LLM_PROVIDER' }, '.env')).toBe(
      'LLM_PROVDER: did you mean LLM_PROVIDER? LLM_PROVDER (in .env) is not a setting of this service and is ignored',
    );
  });
});

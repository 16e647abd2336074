import { ENVIRONMENT } from './app-config.js';
import { KNOWN_VARIABLE_NAMES } from './environment.js';
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

  it("leaves the OpenTelemetry SDK's standard variables alone (with the SDK's names known, as at start-up), not a misspelling of ours", () => {
    const standard = [
      'OTEL_BSP_SCHEDULE_DELAY',
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
      'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
      'OTEL_RESOURCE_ATTRIBUTES',
      'OTEL_TRACES_SAMPLER',
      'OTEL_TRACES_SAMPLER_ARG',
      'OTEL_LOG_LEVEL',
      'OTEL_METRICS_EXPORTER',
      'OTEL_LOGS_EXPORTER',
    ];
    const found = (names: string[]) => misspelledVariables(names, KNOWN_VARIABLE_NAMES).map(({ name, suggestion }) => `${name} → ${suggestion}`);
    expect(found(standard)).toEqual([]);
    expect(found(['OTEL_GENAI_CAPTURE_CONTNT', 'OTEL_EXPORTER_OTLP_ENDPONT'])).toEqual([
      'OTEL_GENAI_CAPTURE_CONTNT → OTEL_GENAI_CAPTURE_CONTENT',
      'OTEL_EXPORTER_OTLP_ENDPONT → OTEL_EXPORTER_OTLP_ENDPOINT',
    ]);
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

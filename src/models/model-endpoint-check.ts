import { probeHttp } from '../common/http-probe.js';
import { hostPort } from '../common/network-failure.js';
import type { AppConfig } from '../config/app-config.js';

/** The public OpenAI API, which the client calls when LLM_BASE_URL is unset. */
const OPENAI_API = 'https://api.openai.com/v1';
/** The longest the start-up probe waits for the model endpoint. */
const PROBE_TIMEOUT_MS = 5000;

/**
 * The start-up look at the chat model's endpoint (LLM_PROVIDER=openai):
 * one GET {LLM_BASE_URL}/models. It stops nothing (turns report a model
 * that fails, with model_error); it returns the warnings to log, each one
 * line naming the variable, the endpoint's host:port and what happened:
 * unreachable, a refused key, a server error, or models it does not list.
 */
export async function checkModelEndpoint(config: AppConfig): Promise<string[]> {
  const llm = config.llm;
  if (llm.provider !== 'openai') return [];
  const base = (llm.baseUrl ?? OPENAI_API).replace(/\/+$/, '');
  const where = `the model endpoint at ${hostPort(base)}`;
  const probe = await probeHttp(`${base}/models`, Math.min(llm.timeoutMs, PROBE_TIMEOUT_MS), llm.apiKey ? { authorization: `Bearer ${llm.apiKey}` } : {});
  if (!probe.reached) return [`LLM_BASE_URL: ${where}: ${probe.problem}; chat turns fail (model_error) until it answers`];
  if (probe.status === 401 || probe.status === 403) return [`LLM_API_KEY: ${where} answered HTTP ${probe.status} to GET /models: the key was refused`];
  if (probe.status >= 500) return [`LLM_BASE_URL: ${where} answered HTTP ${probe.status} to GET /models`];
  if (probe.status !== 200) return []; // an endpoint without /models (404) still serves chat completions
  const listed = modelIds(probe.body);
  if (!listed || listed.length === 0) return [];
  const wanted: Array<[string, string]> = [['LLM_MODEL', llm.model]];
  if (llm.fastModel !== llm.model) wanted.push(['LLM_FAST_MODEL', llm.fastModel]);
  const shown = listed.length > 8 ? `${listed.slice(0, 8).join(', ')}, …` : listed.join(', ');
  return wanted.filter(([, model]) => !listed.includes(model)).map(([variable, model]) => `${variable}: ${where} does not list the model "${model}" (it lists ${shown})`);
}

/** The ids of an OpenAI-style model list (`{ data: [{ id }] }`), or undefined for anything else. */
function modelIds(body: unknown): string[] | undefined {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data)) return undefined;
  return data.map((entry) => (entry as { id?: unknown })?.id).filter((id): id is string => typeof id === 'string');
}

import { CodedError } from '../common/coded-error.js';

/** The model did not answer within LLM_TIMEOUT_MS; raised by the agent's own deadline, whatever the client library reports. */
export class ModelTimeoutError extends CodedError {
  readonly code = 'model_timeout';
  constructor(readonly timeoutMs: number) {
    super(`The model did not answer in time (${timeoutMs} ms).`);
    this.name = 'ModelTimeoutError';
  }
}

/** A model call failed; the client is told the HTTP status the model endpoint answered, if any, never the library's text. */
export class ModelCallError extends CodedError {
  readonly code = 'model_error';
  constructor(cause: unknown) {
    const status = (cause as { status?: unknown })?.status;
    super(`The model failed${typeof status === 'number' ? ` (its endpoint answered HTTP ${status})` : ''}.`, { cause });
    this.name = 'ModelCallError';
  }
}

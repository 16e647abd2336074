/** The model did not answer within LLM_TIMEOUT_MS; raised by the agent's own deadline, whatever the client library reports. */
export class ModelTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the model did not answer within ${timeoutMs} ms`);
    this.name = 'ModelTimeoutError';
  }
}

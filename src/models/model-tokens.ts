/** The shared main model (answers, tool calls). */
export const MAIN_MODEL = Symbol('MAIN_MODEL');
/** The shared fast model (conversation summaries, evidence grading). */
export const FAST_MODEL = Symbol('FAST_MODEL');
/** Builds the main model with a request's sampling (a SampledModelFactory). */
export const SAMPLED_MAIN_MODEL = Symbol('SAMPLED_MAIN_MODEL');

/**
 * Tracing (OpenTelemetry), and who may scrape the metrics (METRICS_TOKEN). The standard OTEL_* variables are read by the
 * OpenTelemetry SDK itself (src/tracing.ts loads it only when one of the
 * first three is set); they are declared here to be validated and listed
 * with the others. OTEL_SDK_VARIABLES names the rest of the SDK's variables
 * this service leaves to it, so that setting one is not taken for a
 * misspelling of ours.
 */
import { z } from 'zod';
import { flag, httpUrl, oneOf } from './values.js';

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;

export const tracing = {
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl()
    .optional()
    .describe('OTLP/HTTP endpoint traces are sent to (`/v1/traces` is appended); set (or OTEL_TRACES_EXPORTER), tracing is on; unset: tracing off, the SDK not loaded'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl().optional().describe('the traces endpoint in full (used as it is); turns tracing on too'),
  OTEL_TRACES_EXPORTER: z.string().optional().describe('`otlp`, `console`, `zipkin` or `none`; set (other than none), tracing is on'),
  OTEL_EXPORTER_OTLP_PROTOCOL: oneOf(OTLP_PROTOCOLS)
    .optional()
    .describe('OTLP encoding: http/protobuf (the SDK default), http/json or grpc')
    .meta({ readmeDefault: 'http/protobuf' }),
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .optional()
    .describe('headers sent with every export, `name=value` pairs separated by commas (an Authorization header for Langfuse or Phoenix)'),
  OTEL_SERVICE_NAME: z.string().optional().describe('the service name in traces').meta({ readmeDefault: 'agentic-rag-chat' }),
  OTEL_SDK_DISABLED: z
    .string()
    .regex(/^(true|false)$/i, 'must be true or false')
    .optional()
    .describe('true turns tracing off, whatever else is set'),
  OTEL_GENAI_CAPTURE_CONTENT: flag()
    .default(false)
    .describe('put message content in spans: prompts, answers, tool arguments and results, queries and passages; off: counts, models and ids only'),
  METRICS_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .max(512)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .optional()
    .describe('bearer token `GET /metrics` requires (`Authorization: Bearer <token>`); unset: /metrics is open (it carries no user data)'),
};

/** The SDK's own variables besides those above (OpenTelemetry's environment specification, traces and the SDK). */
export const OTEL_SDK_VARIABLES = [
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_LOG_LEVEL',
  'OTEL_PROPAGATORS',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_METRICS_EXPORTER',
  'OTEL_LOGS_EXPORTER',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_EXPORTER_OTLP_COMPRESSION',
  'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION',
  'OTEL_EXPORTER_OTLP_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_KEY',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY',
  'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_INSECURE',
  'OTEL_EXPORTER_OTLP_TRACES_INSECURE',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT',
  'OTEL_EXPORTER_ZIPKIN_ENDPOINT',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_EVENT_COUNT_LIMIT',
  'OTEL_SPAN_LINK_COUNT_LIMIT',
  'OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_LINK_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_NODE_RESOURCE_DETECTORS',
  'OTEL_NODE_ENABLED_INSTRUMENTATIONS',
  'OTEL_NODE_DISABLED_INSTRUMENTATIONS',
  'OTEL_SEMCONV_STABILITY_OPT_IN',
  'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
] as const;

import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from './config';

// OpenTelemetry tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set. One trace runs from
// the API request through the workflow start (client interceptor), the workflow and its
// activities (worker interceptors; workflow spans leave the sandbox through a sink) to the
// provider's HTTP calls (provider/client.ts, through the global @opentelemetry/api).

export interface Tracing {
  provider: NodeTracerProvider;
  /** Shared by the process's own spans and the workflow sink, so both flush together. */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Flushes pending spans and unregisters the globals (a later setup in-process starts clean). */
  shutdown(): Promise<void>;
}

/** The module the workflow bundle must include for workflow spans (workflowInterceptorModules). */
export const workflowTracingModule = require.resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/**
 * The workflow interceptor modules tracing needs in the worker's bundle. A prebuilt bundle is
 * the only code a worker runs: the worker ignores `interceptors.workflowModules` beside one.
 * Tracing on is other workflow code, so a build of its own (docs/configuration.md).
 */
export const tracingBundleModules = (tracing: Tracing | undefined): string[] =>
  tracing ? [workflowTracingModule] : [];

export function setupTracing(
  serviceName: string,
  config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT'>,
  opts: { exporter?: SpanExporter } = {},
): Tracing | undefined {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return undefined;
  const exporter =
    opts.exporter ?? new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  const spanProcessor = new BatchSpanProcessor(exporter);
  const resource = new Resource({ [ATTR_SERVICE_NAME]: serviceName });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // Global tracer provider, async-local context and W3C propagation: the Temporal interceptors
  // and the provider client find them through @opentelemetry/api.
  provider.register();
  return {
    provider,
    spanProcessor,
    resource,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The Temporal client's interceptors: each workflow start/update/signal becomes a span. */
export function tracingClientInterceptors(tracing: Tracing | undefined): ClientInterceptors | undefined {
  return tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

/** Worker options for tracing: activity interceptors and the workflow span sink (the workflow
 * interceptors go into the bundle: tracingBundleModules). */
export function tracingWorkerOptions(
  tracing: Tracing | undefined,
): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!tracing) return {};
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

// The call-status service's Prometheus metrics (issue 34): call events by outcome, and light requests
// by result with their latency. Its own registry, like the RMM server's.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** A light request's result text ("HTTP 200", "timed out after 3000 ms", …) as a label. */
export function lightResultLabel(result: string): 'ok' | 'http_error' | 'timeout' | 'unreachable' {
  if (/^HTTP 2\d\d\b/.test(result)) return 'ok';
  if (/^HTTP \d/.test(result)) return 'http_error';
  return /timed out|timeout/i.test(result) ? 'timeout' : 'unreachable';
}

/** A call event's answer text as a label: OK: …, Ignored: …, Unknown extension: … */
export function callOutcomeLabel(answer: string): 'ok' | 'ignored' | 'unknown_extension' {
  if (answer.startsWith('OK:')) return 'ok';
  return answer.startsWith('Ignored:') ? 'ignored' : 'unknown_extension';
}

export class CallstatusMetrics {
  readonly registry = new Registry();
  readonly calls: Counter<'event' | 'outcome'>;
  readonly lights: Counter<'result'>;
  readonly lightSeconds: Histogram;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'callstatus_' });
    // promtool refuses gauges named *_total (see the RMM server's metrics).
    for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) this.registry.removeSingleMetric(`callstatus_nodejs_${name}`);
    this.calls = new Counter({ name: 'callstatus_calls_total', help: 'Call events, by event (callstart, callend) and outcome (ok, ignored, unknown_extension)', labelNames: ['event', 'outcome'], registers });
    this.lights = new Counter({ name: 'callstatus_light_requests_total', help: 'Requests to WLED lights, by result (ok, http_error, timeout, unreachable)', labelNames: ['result'], registers });
    this.lightSeconds = new Histogram({ name: 'callstatus_light_request_duration_seconds', help: 'Time of one light change (effect lookup included)', buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5], registers });
  }
}

/** The Prometheus text exposition format, version 0.0.4. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface Sample {
  labels?: Record<string, string>;
  value: number;
}

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/** One gauge in the exposition format: its help, its type and a line per sample. */
export function gauge(name: string, help: string, samples: Sample[]): string {
  const lines = samples.map(({ labels, value }) => {
    const labelText = labels ? `{${Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
    return `${name}${labelText} ${value}`;
  });
  return [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...lines].join('\n');
}

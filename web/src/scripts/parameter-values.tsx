// The value fields of a script's parameters, prefilled with their defaults by the caller: the run panel
// on an agent and the bulk action form both use them.
import type { Script } from './script-types';
import './scripts.css';

export function ParameterValues({ script, values, onChange }: { script: Script; values: Record<string, string>; onChange: (values: Record<string, string>) => void }) {
  if (script.parameters.length === 0) return <p className="muted">This script has no parameters.</p>;
  return (
    <div className="row parameter-values">
      {script.parameters.map((p) => (
        <label key={p.name} title={p.description || undefined}>
          <span className="mono">{p.name}</span>
          <input
            name={`param-${p.name}`}
            value={values[p.name] ?? ''}
            onChange={(e) => onChange({ ...values, [p.name]: e.target.value })}
            maxLength={1000}
            placeholder={p.default ? `default: ${p.default}` : undefined}
            spellCheck={false}
          />
          {p.description && <span className="muted param-hint">{p.description}</span>}
        </label>
      ))}
    </div>
  );
}

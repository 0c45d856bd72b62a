// An agent's answer to a command, readable: its plain fields as facts, a list of updates as a table,
// anything else as indented JSON. The answer is the agent's (untrusted) and is only ever text here.
import { formatDateTime } from '../../ui/format';
import { bool, obj, objs, str } from '../../ui/safe-data';
import { Badge } from '../../ui/widgets';

const label = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replace(/_/g, ' ');

export function AnswerView({ answer }: { answer: unknown }) {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return <pre>{JSON.stringify(answer, null, 2)}</pre>;
  const fields = obj(answer);
  const scalars = Object.entries(fields).filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
  const updates = objs(fields.updates);
  const rest = Object.fromEntries(Object.entries(fields).filter(([k, v]) => !scalars.some(([s]) => s === k) && !(k === 'updates' && Array.isArray(v))));
  return (
    <>
      {scalars.length > 0 && (
        <dl className="facts">
          {scalars.map(([key, value]) => (
            <div key={key} className="fact">
              <dt>{label(key)}</dt>
              <dd>{typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value) ? formatDateTime(value) : str(value, '–')}</dd>
            </div>
          ))}
        </dl>
      )}
      {Array.isArray(fields.updates) && (
        <table className="answer-updates">
          <thead>
            <tr>
              <th>Package</th>
              <th>Installed</th>
              <th>Available</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {updates.length === 0 ? (
              <tr>
                <td colSpan={4} className="empty">
                  No updates available.
                </td>
              </tr>
            ) : (
              updates.map((u, i) => (
                <tr key={i}>
                  <td className="mono">{str(u.name ?? u.kb ?? u.title, '–')}</td>
                  <td>{str(u.current, '–')}</td>
                  <td>{str(u.new ?? u.available, '–')}</td>
                  <td>{bool(u.security) && <Badge tone="warn">security</Badge>}</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      )}
      {Object.keys(rest).length > 0 && <pre>{JSON.stringify(rest, null, 2)}</pre>}
    </>
  );
}

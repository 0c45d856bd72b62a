// The technician's own labels on an agent: tags (filter the agents list by them) and a free-text note
// (who to call, where the key is). Shown on the overview; "Edit" opens a small form. Tags are typed
// comma-separated, which is why a tag cannot contain a comma.
import { useState } from 'react';
import type { ApiRequest } from '../../api/api-types';
import { api } from '../../api/client';
import type { Agent } from '../../api/types';
import { Allowed } from '../../auth/access';
import { Link } from '../../router';
import { useSubmit } from '../../ui/use-submit';
import { ErrorBanner } from '../../ui/widgets';

const splitTags = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

export function LabelsPanel({ agent, onSaved }: { agent: Agent; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const [tags, setTags] = useState('');
  const [note, setNote] = useState('');
  const { busy, error, setError, submit } = useSubmit(async () => {
    await api<Agent>(`/agents/${encodeURIComponent(agent.id)}`, { method: 'PATCH', body: { tags: splitTags(tags), note } satisfies ApiRequest<'/agents/{id}', 'patch'> });
    setEditing(false);
    onSaved();
  });
  const edit = () => {
    setTags(agent.tags.join(', '));
    setNote(agent.note);
    setError(undefined);
    setEditing(true);
  };

  if (!editing) {
    return (
      <div className="card panel labels" aria-label="Tags and note" data-testid="labels-panel">
        <h2>Tags and note</h2>
        <p data-testid="agent-tags">
          {agent.tags.length === 0 ? (
            <span className="muted">No tags.</span>
          ) : (
            agent.tags.map((tag) => (
              <Link key={tag} className="tag" to={`/agents?tag=${encodeURIComponent(tag)}`} title="All agents with this tag">
                {tag}
              </Link>
            ))
          )}
        </p>
        <p className="note" data-testid="agent-note">
          {agent.note || <span className="muted">No note.</span>}
        </p>
        <Allowed need="write">
          <button type="button" onClick={edit}>
            Edit tags and note
          </button>
        </Allowed>
      </div>
    );
  }
  return (
    <form className="card panel labels" aria-label="Edit tags and note" onSubmit={(e) => void submit(e)}>
      <h2>Tags and note</h2>
      <label>
        Tags (comma-separated)
        <input name="tags" value={tags} onChange={(e) => setTags(e.target.value)} placeholder="vip, backup-nas" />
      </label>
      <label>
        Note
        <textarea name="note" rows={4} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />
      </label>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={() => setEditing(false)} disabled={busy}>
          Cancel
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}

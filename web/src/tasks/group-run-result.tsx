// A group task's run is a bulk action (issue 33): its result names the action, and the action has a
// result per agent. The run shows the link to the action at once (it is made when the run starts) and,
// when opened, the action's own results table: agent names, outputs, exit codes, links to the agents
// and the history (issue 57, item 18), refreshed every 2 s while agents still wait or run.
import { useState } from 'react';
import { api } from '../api/client';
import { CountsLine } from '../bulk/bulk-describe';
import { BulkResults } from '../bulk/bulk-results';
import type { BulkActionWithResults } from '../bulk/bulk-types';
import { Link } from '../router';
import { ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';

const POLL_MS = 2_000;

export function GroupRunResult({ bulkId, open, finished }: { bulkId: number; open: boolean; finished: boolean }) {
  const [expanded, setExpanded] = useState(open);
  return (
    <div data-testid="group-run-result">
      <Link to={`/bulk/${bulkId}`}>Bulk action {bulkId}</Link>
      {!finished && <span className="muted"> · agents that are away are waited for</span>}
      <details open={expanded} onToggle={(e) => setExpanded(e.currentTarget.open)}>
        <summary>Results per agent</summary>
        {expanded && <BulkActionResults bulkId={bulkId} />}
      </details>
    </div>
  );
}

function BulkActionResults({ bulkId }: { bulkId: number }) {
  const [live, setLive] = useState(true);
  const bulk = useResource(
    async (signal) => {
      const action = await api<BulkActionWithResults>(`/bulk-actions/${bulkId}`, { signal });
      setLive(!action.finished);
      return action;
    },
    [bulkId],
    { refreshMs: live ? POLL_MS : undefined },
  );
  if (!bulk.data) return bulk.error ? <ErrorBanner error={bulk.error} /> : <Loading />;
  return (
    <>
      <p>
        <CountsLine counts={bulk.data.counts} />
      </p>
      <BulkResults results={bulk.data.results} />
    </>
  );
}

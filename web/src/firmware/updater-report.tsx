// What the agent's on-device updater last reported (the agent's `updater`): shown beside the "update
// requested" badge on the agent page, in full with its message ("Update to 1.2.0 rolled back 5 min ago:
// no heartbeat within 120 s"), and as a badge in the firmware page's agent list. Servers older than the
// report (no `updater` field) and states this console does not know yet show nothing or a plain badge.
import type { UpdaterReport } from '../api/types';
import { relativeTime } from '../ui/format';
import { Badge, RelativeTime } from '../ui/widgets';
import './updater-report.css';

type Tone = 'good' | 'warn' | 'bad' | 'muted';

const STATES: Record<string, { label: string; outcome: string; tone: Tone }> = {
  installing: { label: 'installing', outcome: 'being installed, started', tone: 'warn' },
  healthy: { label: 'updated', outcome: 'installed and healthy', tone: 'good' },
  rolled_back: { label: 'rolled back', outcome: 'rolled back', tone: 'bad' },
  rollback_failed: { label: 'rollback failed', outcome: 'failed and could not be rolled back (the agent may be down)', tone: 'bad' },
  refused: { label: 'refused', outcome: 'refused by the updater', tone: 'bad' },
};

function describe(report: UpdaterReport) {
  const known = STATES[report.state] ?? { label: report.state.replace(/_/g, ' '), outcome: report.state.replace(/_/g, ' '), tone: 'muted' as const };
  const subject = report.version ? `Update to ${report.version}` : 'Update';
  return { ...known, subject };
}

/** The sentence, for a title: "Update to 1.2.0 rolled back 5 min ago: <message>". */
export function updaterReportText(report: UpdaterReport): string {
  const { subject, outcome } = describe(report);
  return `${subject} ${outcome} ${relativeTime(report.reported_at)}${report.message ? `: ${report.message}` : ''}`;
}

/** The full report with its message, for the agent page; nothing when there is none. */
export function UpdaterReportNote({ report }: { report: UpdaterReport | null | undefined }) {
  if (!report) return null;
  const { label, tone, subject, outcome } = describe(report);
  return (
    <span className="updater-report" data-testid="updater-report" data-state={report.state}>
      <Badge tone={tone}>{label}</Badge>{' '}
      <span>
        {`${subject} ${outcome} `}
        <RelativeTime iso={report.reported_at} />
        {report.message ? `: ${report.message}` : ''}
      </span>
    </span>
  );
}

/** Just the badge, the sentence on hover, for lists; a dash when there is no report. */
export function UpdaterReportBadge({ report }: { report: UpdaterReport | null | undefined }) {
  if (!report) return <span className="muted">–</span>;
  const { label, tone } = describe(report);
  return (
    <span title={updaterReportText(report)} data-testid="updater-report-badge">
      <Badge tone={tone}>{label}</Badge>
    </span>
  );
}

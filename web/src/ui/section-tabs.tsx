// The tab strip of a page with sections (Alerts, Scripts, Checks): each tab a link to its own path, so a
// link or a reload lands on it; the first tab is the section's own path (/alerts), the others below it
// (/alerts/rules).
import { Link } from '../router';

export function SectionTabs({ label, base, tabs, current }: { label: string; base: string; tabs: ReadonlyArray<{ id: string; label: string }>; current: string }) {
  return (
    <nav className="tabs" aria-label={label}>
      {tabs.map((t, i) => (
        <Link key={t.id} to={i === 0 ? base : `${base}/${t.id}`} aria-current={t.id === current ? 'page' : undefined}>
          {t.label}
        </Link>
      ))}
    </nav>
  );
}

// Where the listing is: each ancestor directory a button that opens it, the current one plain text.
import { crumbsOf } from './device-path';

export function Breadcrumbs({ path, open }: { path: string; open: (path: string) => void }) {
  const crumbs = crumbsOf(path);
  return (
    <nav className="file-crumbs" aria-label="Directory">
      {crumbs.map((crumb, i) => (
        <span key={crumb.path}>
          {/* Not the path's own separator: the root (`/`, `C:\`) is a crumb of its own. */}
          {i > 0 ? <span aria-hidden="true"> › </span> : null}
          {i === crumbs.length - 1 ? (
            <span aria-current="location" className="mono">
              {crumb.label}
            </span>
          ) : (
            <button type="button" className="link mono" onClick={() => open(crumb.path)}>
              {crumb.label}
            </button>
          )}
        </span>
      ))}
    </nav>
  );
}

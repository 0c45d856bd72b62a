// Windows panels: the software inventory (what WAU rules are written against), searchable.
import { at, objs, str } from '../../ui/safe-data';
import { DataPanel, dash } from './data-table';

export function WindowsPanels({ system }: { system: unknown }) {
  const software = objs(at(system, 'software')).sort((a, b) => str(a.name).localeCompare(str(b.name)));
  return (
    <DataPanel
      title="Software"
      wide
      rows={software}
      empty="No software inventory reported."
      columns={[
        { label: 'Name', cell: (s) => dash(str(s.name)) },
        { label: 'Version', cell: (s) => <span className="mono">{dash(str(s.version))}</span> },
        { label: 'Publisher', cell: (s) => dash(str(s.publisher)) },
        { label: 'Installed', cell: (s) => dash(str(s.install_date)) },
      ]}
    />
  );
}

// The Windows agent installer (a ZIP): upload a new package, download it. The server adds
// rmm-agent.json (backend URL, WebSocket URL, installer key from the settings) to the download, so what
// comes back differs from what was uploaded. There is no endpoint that describes the stored package:
// the page knows it only from an upload's answer or a download.
import { useRef, useState } from 'react';
import { Link } from '../router';
import { formatBytes } from '../ui/format';
import { useActionError } from '../ui/use-action-error';
import { ErrorBanner } from '../ui/widgets';
import { shortHash, type InstallerPackage } from './firmware-types';
import { downloadWithToken } from './transfer';
import { UploadProgress, useUpload } from './upload-progress';
import { allows, useAccess } from '../auth/access';

export function InstallerSection() {
  const [file, setFile] = useState<File | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const upload = useUpload<InstallerPackage>();
  const download = useActionError();
  const [downloading, setDownloading] = useState(false);

  const submit = async () => {
    if (!file) return;
    const stored = await upload.start({ path: '/installer/upload', query: { platform: 'windows' }, body: file, contentType: 'application/zip' });
    if (!stored) return;
    setFile(null);
    if (fileInput.current) fileInput.current.value = '';
  };
  const save = () =>
    download.guard(async () => {
      setDownloading(true);
      try {
        await downloadWithToken('/installer/download', { platform: 'windows' }, 'rmm-agent-installer-windows.zip');
      } finally {
        setDownloading(false);
      }
    });

  // Storing the package is server-wide (every customer's PCs install it); downloading is for everyone.
  const access = useAccess();
  const mayUpload = allows(access, 'server-wide');
  const downloadButton = (
    <button type="button" disabled={downloading} onClick={() => void save()}>
      {downloading ? 'Downloading…' : 'Download installer'}
    </button>
  );

  return (
    <section className="card" aria-label="Windows installer">
      <h2>Windows installer</h2>
      <p className="muted">
        The download carries <span className="mono">rmm-agent.json</span> with the backend URL, WebSocket URL and installer key from the{' '}
        {allows(access, 'full-admin') ? <Link to="/settings">settings</Link> : 'settings'}; storing a new ZIP replaces the previous one.
      </p>
      {!mayUpload && <div className="row">{downloadButton}</div>}
      {mayUpload && (
        <form
          className="row"
          aria-label="Upload the installer"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <label>
            Installer package (ZIP)
            <input ref={fileInput} type="file" accept=".zip,application/zip" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} disabled={upload.busy} />
          </label>
          <button type="submit" className="primary" disabled={upload.busy}>
            {upload.busy ? 'Sending…' : 'Store installer'}
          </button>
          {downloadButton}
        </form>
      )}
      <UploadProgress upload={upload} testId="installer-progress" />
      <ErrorBanner error={upload.error ?? download.error} />
      {upload.result && (
        <div className="banner banner-info" role="status">
          {`Installer stored: ${formatBytes(upload.result.size)}, SHA-256 ${shortHash(upload.result.sha256)}…`}
        </div>
      )}
    </section>
  );
}

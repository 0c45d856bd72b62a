// Uploads an agent binary for a platform and version. The body is the raw file (the API takes
// application/octet-stream with version and platform in the query, not multipart), sent with
// XMLHttpRequest so the progress shows. The platform has no default: a binary stored under the wrong
// one would be offered to every agent of that platform. A detached signature made offline (npm run cli --
// firmware sign) goes with the upload as its x-firmware-signature header; a server holding
// FIRMWARE_PUBLIC_KEY refuses uploads without a valid one.
import { useRef, useState } from 'react';
import { PLATFORM_LABELS, type Platform } from '../api/types';
import { formatBytes } from '../ui/format';
import { ErrorBanner } from '../ui/widgets';
import { shortHash, SIGNATURE_PATTERN, VERSION_PATTERN, type Firmware } from './firmware-types';
import { UploadProgress, useUpload } from './upload-progress';

export function FirmwareUploadForm({ onUploaded }: { onUploaded: (firmware: Firmware) => void }) {
  const [platform, setPlatform] = useState<Platform | ''>('');
  const [version, setVersion] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [replace, setReplace] = useState(false);
  const [signature, setSignature] = useState('');
  const fileInput = useRef<HTMLInputElement>(null);
  const upload = useUpload<Firmware>();

  const submit = async () => {
    if (!file || !platform) return;
    const query = { platform, version: version.trim(), replace: replace ? 'true' : undefined };
    const signed = signature.trim();
    const headers = signed ? { 'x-firmware-signature': signed } : undefined;
    const stored = await upload.start({ path: '/firmware/upload', query, body: file, contentType: 'application/octet-stream', ...(headers ? { headers } : {}) });
    if (!stored) return; // The error shows; platform, version and file stay for another try.
    setVersion('');
    setFile(null);
    setReplace(false);
    setSignature('');
    if (fileInput.current) fileInput.current.value = '';
    onUploaded(stored);
  };

  const result = upload.result;
  return (
    <form
      className="card"
      aria-label="Upload firmware"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h2>Upload firmware</h2>
      <div className="row">
        <label>
          Platform
          <select value={platform} onChange={(e) => setPlatform(e.target.value as Platform | '')} required disabled={upload.busy}>
            <option value="">Choose…</option>
            {(Object.keys(PLATFORM_LABELS) as Platform[]).map((p) => (
              <option key={p} value={p}>
                {`${PLATFORM_LABELS[p]} (${p})`}
              </option>
            ))}
          </select>
        </label>
        <label>
          Version
          <input
            value={version}
            onChange={(e) => setVersion(e.target.value)}
            required
            pattern={VERSION_PATTERN}
            maxLength={64}
            placeholder="1.2.0"
            title="Letters, digits and . + _ - (starting with a letter or digit), at most 64 characters"
            disabled={upload.busy}
          />
        </label>
        <label>
          File
          <input ref={fileInput} type="file" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} disabled={upload.busy} />
        </label>
        <label>
          Signature (optional)
          <input
            value={signature}
            onChange={(e) => setSignature(e.target.value)}
            pattern={SIGNATURE_PATTERN}
            placeholder="base64, from npm run cli -- firmware sign"
            title="The detached Ed25519 signature, base64 (88 characters)"
            className="mono firmware-signature-input"
            disabled={upload.busy}
          />
        </label>
        <label className="inline">
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.target.checked)} disabled={upload.busy} /> Overwrite if it exists
        </label>
        <button type="submit" className="primary" disabled={upload.busy}>
          {upload.busy ? 'Uploading…' : 'Upload'}
        </button>
      </div>
      {file && <p className="muted">{`${file.name}: ${formatBytes(file.size)}`}</p>}
      <UploadProgress upload={upload} testId="upload-progress" />
      <ErrorBanner error={upload.error} />
      {result && (
        <div className="banner banner-info" role="status">
          {`Uploaded ${PLATFORM_LABELS[result.platform]} ${result.version}: ${formatBytes(result.size)}, SHA-256 ${shortHash(result.sha256)}…, ${result.signature ? 'signed' : 'unsigned'}`}
        </div>
      )}
    </form>
  );
}

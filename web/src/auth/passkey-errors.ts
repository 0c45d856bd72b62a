// What a browser's WebAuthn refusal means to a user. The browser gives the same NotAllowedError for
// "cancelled" and "timed out" on purpose (a page must not learn which passkeys exist), so both read alike.
export function passkeyErrorText(err: unknown): string {
  const name = err instanceof Error ? err.name : '';
  if (name === 'NotAllowedError' || name === 'AbortError') return 'The passkey request was cancelled or timed out.';
  if (name === 'InvalidStateError') return 'This passkey is already registered.';
  if (name === 'SecurityError') return 'Passkeys need the console opened by its host name over HTTPS (or on localhost).';
  if (name === 'NotSupportedError') return 'This browser or device does not support passkeys.';
  return err instanceof Error ? err.message : String(err);
}

// Which web origin a WebAuthn ceremony belongs to, and so its RP ID. The browser's Origin header is
// taken only when it is this server's own origin or one listed in ALLOWED_ORIGINS; anything else is
// refused, so a page elsewhere cannot get options for a relying party it is not. The server's own origin
// is PUBLIC_URL's; without it, the scheme and host the request came to (after any trusted proxy), which
// is the Host header: good enough to check a sign-in (a passkey answers only for the RP ID it was made
// for), but not to make new passkeys, which PUBLIC_URL must name (passkeys.routes.ts). The RP ID is that
// origin's host name: credentials are bound to it, so a passkey made at https://rmm.example.net works
// only there. Browsers refuse IP addresses as RP IDs, so passkeys need the console opened by name
// (localhost counts as a name).
import { isIP } from 'node:net';
import { AppError } from '../../platform/errors.js';

export interface RelyingParty {
  /** The exact origin the browser must report in its client data. */
  origin: string;
  rpID: string;
}

/** What the relying-party check needs to know about a request. */
export interface RequestPlace {
  origin: string | undefined;
  /** `http` or `https`, as the request arrived (or a trusted proxy said). */
  protocol: string;
  /** Host and port the request was sent to. */
  host: string;
}

export function relyingPartyOf(place: RequestPlace, allowedOrigins: readonly string[], publicUrl?: string): RelyingParty {
  if (!place.origin) throw new AppError('FORBIDDEN', 'Passkeys work in a browser only: the request carries no Origin header');
  let origin: URL;
  let own: string;
  try {
    origin = new URL(place.origin);
    own = new URL(publicUrl ?? `${place.protocol}://${place.host}`).origin;
  } catch {
    throw new AppError('FORBIDDEN', 'The Origin header is not a valid origin');
  }
  if (origin.origin !== own && !allowedOrigins.includes(origin.origin)) {
    const whose = publicUrl ? `PUBLIC_URL's (${own})` : "this server's";
    throw new AppError('FORBIDDEN', `Origin ${origin.origin} is neither ${whose} nor in ALLOWED_ORIGINS`);
  }
  // URL keeps IPv6 hosts in brackets; isIP wants them bare.
  const host = origin.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    throw new AppError('FORBIDDEN', 'Passkeys need the console opened by host name, not by IP address (browsers refuse IP addresses as relying-party IDs)');
  }
  return { origin: origin.origin, rpID: host };
}

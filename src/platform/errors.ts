// The one error model: services throw AppError(code, message); the HTTP error handler maps the code to
// a status through ERROR_STATUS and writes the contract's error body (§0). Features add their codes here.

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  CHANNEL_CHECK_FAILED: 400,
  /** An upload's bytes do not hash to the SHA-256 it announced (the device kept nothing). */
  CHECKSUM_MISMATCH: 400,
  UNAUTHORIZED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  AGENT_NOT_REGISTERED: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  AGENT_NOT_CONNECTED: 409,
  /** The agent does not announce the capability an operation needs (an older agent, or one without it). */
  AGENT_UNSUPPORTED: 409,
  /** Install commands need the server's address for devices (the backend_url setting). */
  BACKEND_URL_UNSET: 409,
  LENGTH_REQUIRED: 411,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  UPGRADE_REQUIRED: 426,
  TOO_MANY_ATTEMPTS: 429,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  AGENT_ERROR: 502,
  AGENT_DISCONNECTED: 502,
  SERVICE_UNAVAILABLE: 503,
  DATABASE_UNAVAILABLE: 503,
  NO_FREE_PORT: 503,
  CLUSTER_UNAVAILABLE: 503,
  TERMINAL_UNAVAILABLE: 503,
  AGENT_TIMEOUT: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  /** Response headers that go with the error (Retry-After on 429, for example). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** The code used for a bare status (framework errors that carry only a status code). */
export function codeForStatus(status: number): ErrorCode {
  const byStatus: Partial<Record<number, ErrorCode>> = {
    400: 'BAD_REQUEST',
    401: 'UNAUTHORIZED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    405: 'METHOD_NOT_ALLOWED',
    409: 'CONFLICT',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
    429: 'RATE_LIMITED',
    503: 'SERVICE_UNAVAILABLE',
  };
  return byStatus[status] ?? (status >= 400 && status < 500 ? 'BAD_REQUEST' : 'INTERNAL_ERROR');
}

/** One error type for every failure that is not a business outcome; the HTTP layer maps it to decisions.md's body. */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;

  constructor(status: number, code: string, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.details = details;
  }

  toBody(): { code: string; message: string; details?: ErrorDetail[] } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

export const validationError = (message: string, details?: ErrorDetail[]) => new AppError(400, 'VALIDATION_ERROR', message, details);
export const notFound = (what: string) => new AppError(404, 'NOT_FOUND', `${what} not found`);
export const unauthorized = (message = 'Invalid or expired credentials; authenticate again') =>
  new AppError(401, 'UNAUTHORIZED', message);

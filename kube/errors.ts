// Errors from the Kubernetes API, classified the way retries need them.

/** A non-2xx answer from the API server, with the Status reason and message it returned. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly verb: string,
    readonly path: string,
  ) {
    super(`${verb} ${path}: ${code} ${reason}: ${message}`);
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.code === 404;
}

export function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.code === 409;
}

export function isGone(err: unknown): boolean {
  return err instanceof KubeApiError && err.code === 410;
}

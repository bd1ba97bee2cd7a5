import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

/** Longer than the 60 s idle timeout of common load balancers, so they never reuse a connection the api is closing. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** The request line and headers together (Node's default, stated so the error message cannot drift from it). */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * What Node's HTTP parser refuses before Express sees the request, answered with the platform's error body instead
 * of Node's empty one: a 20 KB `X-Tenant-Id` gets the same 431 as a 100 KB cookie.
 */
const PARSER_FAILURES: Record<string, { status: number; reason: string; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', code: 'HEADERS_TOO_LARGE', message: `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB` },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, reason: 'Payload Too Large', code: 'PAYLOAD_TOO_LARGE', message: 'The chunk extensions are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', code: 'REQUEST_TIMEOUT', message: 'The request was not received in time' },
};
const MALFORMED = { status: 400, reason: 'Bad Request', code: 'VALIDATION_ERROR', message: 'The request is not valid HTTP/1.1' };

function answerParserFailure(err: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node does: answer only while no response of this connection has started, or the bytes would corrupt it.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const failure = PARSER_FAILURES[err.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ code: failure.code, message: failure.message });
  socket.end(
    `HTTP/1.1 ${failure.status} ${failure.reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Serves one of the two apps on `host:port`; resolves once it listens. */
export function serve(app: Express, port: number, host: string): Promise<Server> {
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', answerParserFailure);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

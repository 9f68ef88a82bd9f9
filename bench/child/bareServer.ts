/**
 * Run in a fresh Node process: the least an HTTP server on 127.0.0.1 can do.
 * It reads each request's body, parses it as JSON and answers `{}`. Timing the
 * hook rounds against it shows the floor of this machine (HTTP on loopback,
 * two processes, the scheduler), under the LTM server's own times.
 *
 *   node bareServer.js      (prints one JSON line {"port": N}, serves until killed)
 */
import * as http from 'node:http';

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    if (text) JSON.parse(text);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

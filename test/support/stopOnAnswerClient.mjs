// A caller that sends a body far over the node's limit and stops writing once the answer arrives, run as a child
// process by test/a2a/lingeringClose.test.ts: in the node's own process the two sides would take turns on one event
// loop, and the race the test is about (the caller still writing while the node closes) would never happen.
// Usage: node stopOnAnswerClient.mjs <url> <runs>   Prints one JSON line: each run's status, or the error met first.
import { Buffer } from 'node:buffer';
import http from 'node:http';

const [url, runs = '30'] = process.argv.slice(2);
/** 4 MiB of chunked JSON in 64 KiB writes, each once the last drained. */
const PIECE = 64 * 1024;
const TOTAL = 4 * 1024 * 1024;

function once() {
  return new Promise((resolve) => {
    let answered = false;
    const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      answered = true;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
      res.on('error', (err) => resolve({ error: `${err.code ?? err.message} while reading the answer` }));
    });
    req.on('error', (err) => {
      if (!answered) resolve({ error: err.code ?? err.message });
    });
    const piece = Buffer.alloc(PIECE, 0x20);
    let sent = 0;
    const write = () => {
      // It stops once the answer arrives, and never ends a body it did not finish.
      while (!answered && !req.destroyed && sent < TOTAL) {
        sent += PIECE;
        if (!req.write(piece)) {
          req.once('drain', write);
          return;
        }
      }
      if (!answered && !req.destroyed) req.end();
    };
    req.write('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"');
    write();
  });
}

const outcomes = [];
for (let run = 0; run < Number(runs); run++) outcomes.push(await once());
process.stdout.write(`${JSON.stringify(outcomes)}\n`);

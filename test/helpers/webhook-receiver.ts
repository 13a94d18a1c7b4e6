import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { type WebhookBody, webhookBodySchema } from '../../contracts/events';

// A backend's webhook receiver, as a real one is written: it verifies every request with the
// `standardwebhooks` library against the secrets it knows, and keeps what it received. How it
// answers is up to the test: 200, an error status, or no answer at all (a hang past pixflow's
// timeout).

export type Answer = number | 'hang';

export interface Received {
  webhookId: string;
  body: WebhookBody;
  /** The secrets (by index in `secrets` when it arrived) whose signature verified. */
  verifiedBy: number[];
  signatures: number;
  answeredWith: Answer;
  at: number;
  /** When the request's connection closed (the sender gave up on a hung one, or it was answered). */
  endedAt?: number;
}

export interface WebhookReceiver {
  url: string;
  /** Every request, verified or not, in arrival order. */
  received: Received[];
  /** Requests none of the secrets verifies (never expected). */
  unverified: string[];
  secrets: string[];
  /** How to answer the next request; default 200. */
  answer: (r: { webhookId: string; body: WebhookBody }) => Answer;
  /** Distinct webhook ids answered 2xx, in the order of their first 2xx. */
  delivered(): Received[];
  close(): Promise<void>;
}

/** A signed request as received: its body as sent, its Standard Webhooks headers, and a check of them. */
export async function signedRequestOf(req: http.IncomingMessage) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const headers = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h] ?? '')]),
  );
  /** Whether the request is signed with this secret (the `standardwebhooks` library's check). */
  const verifies = (secret: string) => {
    try {
      new Webhook(secret).verify(raw, headers);
      return true;
    } catch {
      return false;
    }
  };
  return { raw, headers, verifies };
}

export async function startWebhookReceiver(secrets: string[] = []): Promise<WebhookReceiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    unverified: [],
    secrets,
    answer: () => 200,
    delivered() {
      const seen = new Set<string>();
      return this.received.filter((r) => {
        if (typeof r.answeredWith !== 'number' || r.answeredWith >= 300 || seen.has(r.webhookId))
          return false;
        seen.add(r.webhookId);
        return true;
      });
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer(async (req, res) => {
    const { raw, headers, verifies } = await signedRequestOf(req);
    const verifiedBy = receiver.secrets.flatMap((s, i) => (verifies(s) ? [i] : []));
    const parsed = webhookBodySchema.safeParse(JSON.parse(raw));
    if (verifiedBy.length === 0 || !parsed.success) {
      receiver.unverified.push(
        `${headers['webhook-id']}: ${parsed.success ? 'signature' : parsed.error.message}`,
      );
      res.writeHead(400).end();
      return;
    }
    const webhookId = headers['webhook-id'] as string;
    const answeredWith = receiver.answer({ webhookId, body: parsed.data });
    const got: Received = {
      webhookId,
      body: parsed.data,
      verifiedBy,
      signatures: (headers['webhook-signature'] as string).split(' ').length,
      answeredWith,
      at: Date.now(),
    };
    receiver.received.push(got);
    res.on('close', () => {
      got.endedAt = Date.now();
    });
    if (answeredWith === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    res.writeHead(answeredWith, { 'content-type': 'text/plain' }).end(answeredWith < 300 ? 'ok' : 'not now');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
